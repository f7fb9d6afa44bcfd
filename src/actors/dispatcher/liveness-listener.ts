import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { LivenessBeat, parseBeat } from '../liveness-beat';

/** Longest beat line read (bytes); a longer one closes the connection (not a worker's). */
const MAX_LINE_BYTES = 1024;

/**
 * The dispatcher's end of the worker processes' liveness channel: a local socket (a Unix socket in
 * a private temporary folder, mode 0700; a named pipe on Windows) on which each worker process's
 * liveness thread writes one JSON line `{"w": workerId, "p": pid}` every `heartbeatMs`. The beats
 * come from a thread of their own, so a handler that keeps its process's event loop busy does not
 * stop them; a dead or stopped (SIGSTOP) process does. Malformed lines are ignored; a line longer
 * than 1 KiB closes its connection. A socket file removed under it (a temporary-folder cleaner) is
 * made again at the same address by {@link heal}: workers connected before keep their connections,
 * and those started after (respawned) could not connect, so every lease of theirs expired.
 */
export class LivenessListener {
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private server: net.Server,
    /** The address workers connect to (a socket path or a pipe name). */
    readonly address: string,
    private readonly dir: string | null,
    private readonly onBeat: (beat: LivenessBeat) => void,
    private readonly log: Pick<Logger, 'warn'>,
  ) {}

  /**
   * Listens on a new private address and calls `onBeat` for each beat received.
   * @throws the listen error (e.g. no writable temporary folder)
   */
  static async open(onBeat: (beat: LivenessBeat) => void, log: Pick<Logger, 'warn'>): Promise<LivenessListener> {
    const dir = process.platform === 'win32' ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'scheduler-live-'));
    const address = dir === null ? `\\\\?\\pipe\\scheduler-live-${process.pid}-${randomUUID()}` : path.join(dir, 'beats.sock');
    const listener = new LivenessListener(net.createServer(), address, dir, onBeat, log);
    try {
      listener.server = await listener.listen();
    } catch (err) {
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
      throw err;
    }
    return listener;
  }

  /**
   * Listens again at the same address when its socket file is gone (removed by something else),
   * remaking its folder (mode 0700); the old server stops accepting, its connections go on.
   * Called at each worker ping (`workerPingMs`).
   * @returns true when it listens again; false when nothing was missing, or (logged) it could not
   */
  async heal(): Promise<boolean> {
    if (this.dir === null || fs.existsSync(this.address)) return false;
    this.log.warn(
      { address: this.address },
      'liveness channel: its socket file was removed (a temporary-folder cleaner?); listening again at the same address',
    );
    try {
      fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      // The old server first: closing a Unix socket server unlinks its path (libuv), which would
      // remove the new one's file. Its connections go on; it accepts nothing more.
      this.server.close();
      this.server = await this.listen();
      return true;
    } catch (err) {
      this.log.warn({ err, address: this.address }, 'liveness channel: cannot listen again; new worker processes cannot send beats');
      return false;
    }
  }

  /**
   * Stops listening, drops the connections and removes the socket's folder; never throws (a folder
   * it cannot remove is logged and left).
   */
  async close(): Promise<void> {
    // The folder goes first, synchronously: a process that exits right after a stop leaves none.
    if (this.dir) this.removeDir(this.dir);
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /**
   * Removes the socket file and its folder by name: a recursive removal would open the folder to
   * list it, which fails (EMFILE) at the open-files limit, the very moment a stop may come.
   */
  private removeDir(dir: string): void {
    try {
      fs.rmSync(this.address, { force: true });
      fs.rmdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      this.log.warn({ err, dir }, 'liveness channel: cannot remove its folder; left in place');
    }
  }

  /** A server on {@link address} reading beat lines. @throws the listen error */
  private async listen(): Promise<net.Server> {
    const { address, log, onBeat } = this;
    const server = net.createServer((socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined); // a worker killed mid-write: its close follows
      let pending = '';
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => {
        pending += chunk;
        let nl: number;
        while ((nl = pending.indexOf('\n')) >= 0) {
          const beat = parseBeat(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
          if (beat) onBeat(beat);
        }
        if (pending.length > MAX_LINE_BYTES) {
          log.warn({ address }, 'liveness channel: line too long; connection closed');
          socket.destroy();
        }
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(address, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (err) => log.warn({ err, address }, 'liveness channel error'));
    return server;
  }
}
