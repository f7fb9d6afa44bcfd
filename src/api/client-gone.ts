import type { FastifyReply } from 'fastify';

/**
 * An AbortSignal aborted when the client goes away before its answer was written (the connection
 * closed under a long poll), so that what waits for it is freed at once. Node emits the
 * response's `close` both then and after a normal answer; only the first case aborts.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const ac = new AbortController();
  const res = reply.raw;
  res.once('close', () => {
    if (!res.writableFinished) ac.abort();
  });
  return ac.signal;
}
