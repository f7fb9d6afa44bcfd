/**
 * Keeps a handler's `process.send(null)` from ending the service process: comedy's listener on
 * the worker's IPC channel, in the service, reads `id` of every message that arrives, and a `null`
 * message made it throw there, outside any handler, which ended the service (every attempt of
 * every worker cut off; a task retried did it again). Anything else a handler sends (a string, an
 * object) comedy only logs as not its own.
 * @param proc the worker process (given in tests)
 * @effects replaces `proc.send` (when the process has an IPC channel) with one that throws a
 *   TypeError at the caller for `null` or `undefined` and passes everything else on unchanged
 */
export function guardProcessSend(proc: Pick<NodeJS.Process, 'send'> = process): void {
  const send = proc.send;
  if (typeof send !== 'function') return;
  proc.send = function guardedSend(this: unknown, message: unknown, ...rest: unknown[]) {
    if (message === null || message === undefined)
      throw new TypeError(`process.send(${message}) in a worker process is refused: the scheduler's IPC channel carries actor messages`);
    return (send as (...args: unknown[]) => boolean).call(proc, message, ...rest);
  } as NodeJS.Process['send'];
}
