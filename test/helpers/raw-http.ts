import net from 'node:net';

/**
 * Sends one raw HTTP/1.1 request to 127.0.0.1:`port` (header lines, then `body` with its
 * content-length when given; `connection: close`) and resolves with the status and JSON body of
 * the answer. For what `app.inject` cannot send: repeated headers, which it joins into one line.
 */
export function rawRequest(port: number, lines: string[], body?: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, json] = text.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body: json ? JSON.parse(json) : null });
    });
    const length = body === undefined ? '' : `\r\ncontent-length: ${Buffer.byteLength(body)}`;
    socket.write(`${lines.join('\r\n')}${length}\r\nconnection: close\r\n\r\n${body ?? ''}`);
  });
}
