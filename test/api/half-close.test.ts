import { expect } from 'chai';
import net from 'node:net';
import { apiFixture, ApiFixture, sendJson } from '../helpers/api-fixture';

/**
 * Sends one whole HTTP/1.1 request and half-closes at once (`socket.end(request)`: a FIN, as
 * `nc -N` and some proxies do), then reads until the server closes. @returns everything read
 */
function halfClosed(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => (text += d));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
    socket.end(request);
  });
}

/**
 * A client that half-closed its side after a complete request got no answer: Node's server (its
 * `httpAllowHalfOpen` false) aborted the request on the FIN and ended the socket, while the task
 * was stored anyway. The answer is written, then the connection is closed.
 */
describe('REST: a client that half-closes once its request is sent', () => {
  let f: ApiFixture;
  let port: number;
  before(async () => {
    f = await apiFixture();
    await f.app.listen({ port: 0, host: '127.0.0.1' });
    port = (f.app.server.address() as net.AddressInfo).port;
  });
  after(async () => f.close());

  it('gets the answer of a POST with a body (202, the task stored), then the connection closes', async () => {
    const body = '{"task_type":"noop","idempotency_key":"half-closed"}';
    const text = await halfClosed(
      port,
      `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    expect(text.split('\r\n')[0]).to.equal('HTTP/1.1 202 Accepted');
    const answer = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
    expect(f.stored.map((e) => e.id)).to.include(answer.task_id);
  });

  it('gets the answer of a bodiless POST and of a GET', async () => {
    const submitted = await sendJson(f, 'POST', '/api/v1/tasks', { task_type: 'noop', scheduled_at: '2099-01-01T00:00:00Z' });
    const id = submitted.json().task_id as string;
    const cancel = await halfClosed(port, `POST /api/v1/tasks/${id}/cancel HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(cancel.split('\r\n')[0]).to.match(/^HTTP\/1\.1 20[02] /);
    expect((await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${id}` })).json().status).to.equal('CANCELLED');
    const get = await halfClosed(port, 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(get.split('\r\n')[0]).to.equal('HTTP/1.1 200 OK');
  });
});
