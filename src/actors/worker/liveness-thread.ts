/**
 * A worker process's liveness thread (a `worker_threads` thread, `liveness-thread-main.ts`): it
 * writes a beat line to the dispatcher's liveness listener every `intervalMs`. It runs beside the
 * handlers' event loop, so a handler computing for a long time does not silence it; a dead or
 * stopped (SIGSTOP) process does, and then the attempts' leases expire. It also watches the
 * service: once this process's parent is no longer `parentPid` (the service died, SIGKILL or a
 * crash, and the process was re-parented), it kills this process and the processes below it, so a
 * handler stuck in synchronous code, whose event loop never sees the IPC channel close, does not
 * go on beside the retry the restarted service makes.
 */
import path from 'node:path';
import { Worker } from 'node:worker_threads';

/** What the thread is started with. */
export interface LivenessThreadData {
  /** The listener's address (a socket path or a pipe name). */
  address: string;
  workerId: string;
  /** Between two beats (ms). */
  intervalMs: number;
  /** The service's pid (this process's parent when it started). */
  parentPid: number;
}

/**
 * Starts the liveness thread of this worker process. The thread does not keep the process alive
 * (`unref`): the process ends as before, and the thread with it.
 * @param onError told when the thread fails (its beats stop; the leases then expire)
 */
export function startLivenessThread(data: LivenessThreadData, onError: (err: Error) => void): Worker {
  const thread = new Worker(path.join(__dirname, 'liveness-thread-main.js'), { workerData: data, stdout: false, stderr: false });
  thread.on('error', onError);
  thread.unref();
  return thread;
}
