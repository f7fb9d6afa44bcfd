/**
 * The entry of a worker process's liveness thread (started by `startLivenessThread`): connects to
 * the dispatcher's liveness listener and writes a beat every `intervalMs`, reconnecting on the
 * next tick after a drop (the dispatcher restarting its listener, a write error); and kills this
 * process with the processes below it once its parent is no longer the service (`parentPid`).
 */
import net from 'node:net';
import { workerData } from 'node:worker_threads';
import { beatLine } from '../liveness-beat';
import { killOwnTree } from '../process-tree';
import type { LivenessThreadData } from './liveness-thread';

/** How often the thread compares this process's parent with the service's pid (ms): `getppid`, cheap. */
const PARENT_CHECK_MS = 200;

/**
 * Kills this process and its descendants once its parent is not `parentPid` any more: the service
 * died and the process was re-parented (to init or a subreaper). From this thread, so it works
 * while a handler holds the process's event loop in synchronous code.
 */
function watchParent(parentPid: number): void {
  setInterval(() => {
    if (process.ppid !== parentPid) killOwnTree();
  }, PARENT_CHECK_MS);
}

/** The thread's loop: connect, beat every interval, reconnect on the next tick after a drop. */
function beat(data: LivenessThreadData): void {
  const line = beatLine(data.workerId, process.pid);
  let socket: net.Socket | null = null;
  const connect = () => {
    const s = net.createConnection(data.address, () => s.write(line));
    s.on('error', () => undefined); // the close that follows clears it; the next tick reconnects
    s.on('close', () => {
      if (socket === s) socket = null;
    });
    socket = s;
  };
  connect();
  setInterval(() => {
    if (socket === null) connect();
    else if (!socket.connecting) socket.write(line);
  }, data.intervalMs);
}

beat(workerData as LivenessThreadData);
watchParent((workerData as LivenessThreadData).parentPid);
