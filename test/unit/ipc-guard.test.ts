import { expect } from 'chai';
import { guardProcessSend } from '../../src/actors/worker/ipc-guard';

/** A worker's `process.send(null)` ended the service process (comedy read `null.id` there): refused in the worker. */
describe('guardProcessSend: what a handler may send on the worker IPC channel', () => {
  it('throws a TypeError for null and undefined at the caller; passes everything else on, with its arguments', () => {
    const sent: unknown[][] = [];
    const proc = {
      send(this: unknown, ...args: unknown[]) {
        sent.push(args);
        return true;
      },
    } as unknown as Pick<NodeJS.Process, 'send'>;
    guardProcessSend(proc);
    const send = proc.send as (...args: unknown[]) => boolean;
    expect(() => send(null)).to.throw(TypeError, 'process.send(null) in a worker process is refused');
    expect(() => send(undefined)).to.throw(TypeError, 'process.send(undefined)');
    const cb = () => undefined;
    expect(send({ type: 'actor-message', id: 1 }, undefined, {}, cb)).to.equal(true);
    expect(send('text')).to.equal(true);
    expect(sent).to.deep.equal([[{ type: 'actor-message', id: 1 }, undefined, {}, cb], ['text']]);
  });

  it('does nothing in a process without an IPC channel', () => {
    const proc = {} as Pick<NodeJS.Process, 'send'>;
    guardProcessSend(proc);
    expect(proc.send).to.equal(undefined);
  });
});
