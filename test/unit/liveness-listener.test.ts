import { expect } from 'chai';
import fs from 'node:fs';
import net from 'node:net';
import pino from 'pino';
import type { Worker } from 'node:worker_threads';
import { LivenessListener } from '../../src/actors/dispatcher/liveness-listener';
import { startLivenessThread } from '../../src/actors/worker/liveness-thread';
import { beatLine, LivenessBeat, parseBeat } from '../../src/actors/liveness-beat';

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
    thread = startLivenessThread({ address: l.address, workerId: 'worker-7', intervalMs: 50 }, (err) => expect.fail(String(err)));
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

  it('parseBeat reads what beatLine writes', () => {
    expect(parseBeat(beatLine('worker-1', 99).trim())).to.deep.equal({ workerId: 'worker-1', pid: 99 });
    expect(parseBeat('{"w":"a","p":1.5}')).to.equal(null);
  });
});
