import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import pino from 'pino';
import type { Worker } from 'node:worker_threads';
import { LivenessListener } from '../../src/actors/dispatcher/liveness-listener';
import { startLivenessThread } from '../../src/actors/worker/liveness-thread';
import { beatLine, LivenessBeat, parseBeat } from '../../src/actors/liveness-beat';
import { isAlive } from '../helpers/process-files';

const log = pino({ level: 'silent' });

/** The worker processes' liveness channel: a thread's beats on a private local socket. */
describe('liveness channel (listener and thread)', function () {
  this.timeout(20_000);
  let listener: LivenessListener | null = null;
  let thread: Worker | null = null;
  afterEach(async () => {
    await thread?.terminate();
    thread = null;
    await listener?.close();
    listener = null;
  });

  it('reads the beats of a liveness thread, also while the thread starting it keeps its event loop busy', async () => {
    const beats: Array<LivenessBeat & { at: number }> = [];
    listener = await LivenessListener.open((b) => beats.push({ ...b, at: Date.now() }), log);
    let first: () => void = () => undefined;
    const firstBeat = new Promise<void>((r) => (first = r));
    const l = listener;
    // Beats are read on this thread; the thread under test writes them from its own.
    // parentPid: this process's own parent, so the thread's service watch never fires here.
    const data = { address: l.address, workerId: 'worker-7', intervalMs: 50, parentPid: process.ppid };
    thread = startLivenessThread(data, (err) => expect.fail(String(err)));
    const poll = setInterval(() => beats.length > 0 && first(), 5); // waiting for the first beat, not for time
    await firstBeat;
    clearInterval(poll);
    expect(beats[0]).to.deep.include({ workerId: 'worker-7', pid: process.pid });
    const before = beats.length;
    const spinUntil = Date.now() + 600;
    while (Date.now() < spinUntil); // this loop is busy; the thread's beats wait in the socket
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 20)); // let the socket's buffered data be read
    expect(beats.length - before).to.be.at.least(3);
  });

  it('a socket file removed under it (a temporary-folder cleaner): heal() listens again at the same address, and a thread started after connects', async () => {
    const beats: LivenessBeat[] = [];
    listener = await LivenessListener.open((b) => beats.push(b), log);
    expect(await listener.heal(), 'nothing missing').to.equal(false);
    fs.rmSync(listener.address.slice(0, listener.address.lastIndexOf('/')), { recursive: true, force: true });
    expect(fs.existsSync(listener.address)).to.equal(false);
    expect(await listener.heal()).to.equal(true);
    expect(fs.existsSync(listener.address)).to.equal(true);
    let first: () => void = () => undefined;
    const firstBeat = new Promise<void>((r) => (first = r));
    thread = startLivenessThread({ address: listener.address, workerId: 'worker-9', intervalMs: 20, parentPid: process.ppid }, (err) =>
      expect.fail(String(err)),
    );
    const poll = setInterval(() => beats.length > 0 && first(), 5); // waiting for the first beat, not for time
    await firstBeat;
    clearInterval(poll);
    expect(beats[0]).to.deep.include({ workerId: 'worker-9' });
  });

  it('when the service dies, the thread kills its worker process and what the handler started, even with the event loop blocked', async function () {
    if (process.platform !== 'linux') this.skip(); // parents read from /proc
    // service (SIGKILLed below) → worker (liveness thread; its loop blocked in synchronous code) → sleep
    const worker = `
      const { startLivenessThread } = require(${JSON.stringify(require.resolve('../../src/actors/worker/liveness-thread'))});
      const sleep = require('node:child_process').spawn('sleep', ['60'], { stdio: 'ignore' });
      const data = { address: '/nonexistent/beats.sock', workerId: 'w', intervalMs: 1000, parentPid: process.ppid };
      startLivenessThread(data, () => undefined);
      process.stdout.write(JSON.stringify({ worker: process.pid, sleep: sleep.pid }) + '\\n');
      const until = Date.now() + 60000;
      while (Date.now() < until);
    `;
    const service = spawn(
      process.execPath,
      [
        '-e',
        `const w = require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(worker)}], { stdio: ['ignore', 'pipe', 'inherit'] }); w.stdout.pipe(process.stdout); setInterval(() => undefined, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const pids: number[] = [];
    try {
      const first = await new Promise<string>((resolve, reject) => {
        const lines = readline.createInterface({ input: service.stdout as NodeJS.ReadableStream });
        lines.once('line', (l) => {
          lines.close();
          resolve(l);
        });
        service.once('exit', () => reject(new Error('the service stand-in exited early')));
      });
      const { worker: workerPid, sleep } = JSON.parse(first) as { worker: number; sleep: number };
      pids.push(workerPid, sleep);
      expect(isAlive(workerPid) && isAlive(sleep)).to.equal(true);
      service.kill('SIGKILL');
      // Waiting for the processes to end (polling their state), not for a time.
      const deadline = Date.now() + 5000;
      while ((isAlive(workerPid) || isAlive(sleep)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(isAlive(workerPid), 'the worker process 5 s after its service died').to.equal(false);
      expect(isAlive(sleep), "the handler's child process 5 s after the service died").to.equal(false);
    } finally {
      service.kill('SIGKILL');
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
  });

  it('ignores malformed lines, closes a connection whose line is too long, and close() removes its folder', async () => {
    const beats: LivenessBeat[] = [];
    listener = await LivenessListener.open((b) => beats.push(b), log);
    const address = listener.address;
    const socket = net.createConnection(address);
    const closed = new Promise((r) => socket.on('close', r));
    socket.on('error', () => undefined);
    socket.write('not json\n{"w":1,"p":2}\n{"w":"w","p":-1}\nnull\n' + beatLine('worker-2', 4242));
    socket.write('x'.repeat(2000));
    await closed;
    expect(beats).to.deep.equal([{ workerId: 'worker-2', pid: 4242 }]);
    await listener.close();
    listener = null;
    if (process.platform !== 'win32') expect(fs.existsSync(address)).to.equal(false);
  });

  it('close() never throws: a folder already gone is fine, one it cannot remove is logged and left', async function () {
    if (process.platform === 'win32') this.skip();
    const warnings: string[] = [];
    const warnLog = { warn: (_obj: unknown, msg: string) => warnings.push(msg) } as never;
    const gone = await LivenessListener.open(() => undefined, warnLog);
    fs.rmSync(path.dirname(gone.address), { recursive: true, force: true });
    await gone.close();
    const kept = await LivenessListener.open(() => undefined, warnLog);
    const dir = path.dirname(kept.address);
    fs.writeFileSync(path.join(dir, 'other'), ''); // not its own: the folder stays
    await kept.close();
    expect(fs.existsSync(kept.address), 'its socket file').to.equal(false);
    expect(warnings).to.deep.equal(['liveness channel: cannot remove its folder; left in place']);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('parseBeat reads what beatLine writes', () => {
    expect(parseBeat(beatLine('worker-1', 99).trim())).to.deep.equal({ workerId: 'worker-1', pid: 99 });
    expect(parseBeat('{"w":"a","p":1.5}')).to.equal(null);
  });
});
