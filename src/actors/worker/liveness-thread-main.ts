/**
 * The entry of a worker process's liveness thread (started by `startLivenessThread`): connects to
 * the dispatcher's liveness listener and writes a beat every `intervalMs`, reconnecting on the
 * next tick after a drop (the dispatcher restarting its listener, a write error).
 */
import net from 'node:net';
import { workerData } from 'node:worker_threads';
import { beatLine } from '../liveness-beat';
import type { LivenessThreadData } from './liveness-thread';

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
