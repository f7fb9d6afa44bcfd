import type { Server, Socket } from 'node:net';
import type { Clock } from '../domain/clock';

/**
 * Every TCP connection of an HTTP or HTTPS server, from its accept to its close, including the
 * ones Node's `closeAllConnections()` does not know: a connection that never sent a request, or
 * whose TLS handshake never finished. `server.close()` waits for all of them, so one idle client
 * (a TCP health check, a port scan) could hold a graceful stop for as long as it stayed (for ever,
 * on an HTTPS handshake that never completes).
 */
export class OpenSockets {
  private readonly sockets = new Set<Socket>();

  /** @param server the server to follow (its `connection` event: raw sockets, before any TLS) */
  constructor(server: Server) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Destroys every connection still open. @returns how many there were */
  destroyAll(): number {
    const n = this.sockets.size;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    return n;
  }
}

/**
 * Closes a fastify app, waiting at most `boundMs` for its connections to end by themselves, then
 * destroying those left (by then every request has been answered: the service stopped taking work
 * and drained before it closes HTTP).
 * @returns the connections destroyed (0: all had ended)
 */
export async function closeWithin(
  app: { close(): Promise<unknown> },
  sockets: OpenSockets,
  boundMs: number,
  clock: Clock,
): Promise<number> {
  let destroyed = 0;
  const closing = app.close();
  const timer = clock.setTimeout(() => (destroyed = sockets.destroyAll()), boundMs);
  try {
    await closing;
  } finally {
    clock.clearTimeout(timer);
  }
  return destroyed;
}
