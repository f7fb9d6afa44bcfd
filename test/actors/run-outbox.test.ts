import { expect } from 'chai';
import { RunOutbox } from '../../src/actors/dispatcher/run-outbox';
import type { WorkerSlot } from '../../src/actors/dispatcher/worker-pool';
import type { WorkItem } from '../../src/actors/protocol';

const item = (id: string): WorkItem => ({ id, attempt: 1, taskType: 'noop', payload: null, timeoutMs: 1000, idempotencyKey: null });
const slotOf = (id: string, pid: number) => ({ id, pid, credits: 0, ref: null }) as unknown as WorkerSlot;
const nextIteration = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('RunOutbox: one run message per worker per event-loop iteration', () => {
  it('gathers the attempts added for each worker before the check phase into one message each, in order', async () => {
    const sent: Array<[string, string[]]> = [];
    const outbox = new RunOutbox((slot, items) => sent.push([slot.id, items.map((i) => i.id)]));
    const w1 = slotOf('w1', 10);
    const w2 = slotOf('w2', 20);
    outbox.add(w1, [item('a'), item('b')]);
    outbox.add(w2, [item('c')]);
    outbox.add(w1, [item('d')]);
    expect(sent, 'nothing sent inside the turn').to.deep.equal([]);
    await nextIteration();
    expect(sent).to.deep.equal([
      ['w1', ['a', 'b', 'd']],
      ['w2', ['c']],
    ]);
    outbox.add(w2, [item('e')]); // a later iteration: a message of its own
    await nextIteration();
    expect(sent.slice(2)).to.deep.equal([['w2', ['e']]]);
  });

  it('does not send attempts gathered for a process that was replaced before the send (they were counted lost)', async () => {
    const sent: Array<[number, string[]]> = [];
    const outbox = new RunOutbox((slot, items) => sent.push([slot.pid, items.map((i) => i.id)]));
    const w1 = slotOf('w1', 10);
    outbox.add(w1, [item('a')]);
    w1.pid = 11; // respawned
    await nextIteration();
    expect(sent).to.deep.equal([]);
    outbox.add(w1, [item('b')]); // claimed for the new process
    outbox.add(w1, [item('c')]);
    await nextIteration();
    expect(sent).to.deep.equal([[11, ['b', 'c']]]);
  });

  it('keeps the caller array untouched', async () => {
    const outbox = new RunOutbox(() => undefined);
    const items = [item('a')];
    const w1 = slotOf('w1', 10);
    outbox.add(w1, items);
    outbox.add(w1, [item('b')]);
    await nextIteration();
    expect(items.map((i) => i.id)).to.deep.equal(['a']);
  });
});
