import { expect } from 'chai';
import { RunOutbox, sendRun } from '../../src/actors/dispatcher/run-outbox';
import type { FinishedAttempt, RunningAttempt } from '../../src/actors/dispatcher/attempt-watchdog';
import { ManualClock } from '../../src/domain/clock';
import type { ClaimedTask } from '../../src/domain/task';
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
    outbox.add(w1, [item('a'), item('b')], 1000);
    outbox.add(w2, [item('c')], 1000);
    outbox.add(w1, [item('d')], 1000);
    expect(sent, 'nothing sent inside the turn').to.deep.equal([]);
    await nextIteration();
    expect(sent).to.deep.equal([
      ['w1', ['a', 'b', 'd']],
      ['w2', ['c']],
    ]);
    outbox.add(w2, [item('e')], 1000); // a later iteration: a message of its own
    await nextIteration();
    expect(sent.slice(2)).to.deep.equal([['w2', ['e']]]);
  });

  it('does not send attempts gathered for a process that was replaced before the send (they were counted lost)', async () => {
    const sent: Array<[number, string[]]> = [];
    const outbox = new RunOutbox((slot, items) => sent.push([slot.pid, items.map((i) => i.id)]));
    const w1 = slotOf('w1', 10);
    outbox.add(w1, [item('a')], 1000);
    w1.pid = 11; // respawned
    await nextIteration();
    expect(sent).to.deep.equal([]);
    outbox.add(w1, [item('b')], 1000); // claimed for the new process
    outbox.add(w1, [item('c')], 1000);
    await nextIteration();
    expect(sent).to.deep.equal([[11, ['b', 'c']]]);
  });

  it('afterRuns: a message about an attempt goes after the run message queued for its worker, never ahead of it', async () => {
    const sent: string[] = [];
    const outbox = new RunOutbox((slot, items) => sent.push(`run ${slot.id} ${items.map((i) => i.id).join(',')}`));
    const w1 = slotOf('w1', 10);
    const w2 = slotOf('w2', 20);
    outbox.add(w1, [item('a')], 1000);
    outbox.afterRuns(w1, () => sent.push('abort a')); // a cancel answered in the claim's commit
    outbox.afterRuns(w2, () => sent.push('abort z')); // nothing queued for w2: at once
    expect(sent).to.deep.equal(['abort z']);
    await nextIteration();
    expect(sent).to.deep.equal(['abort z', 'run w1 a', 'abort a']);
    outbox.add(w1, [item('b')], 1000);
    outbox.afterRuns(w1, () => sent.push('abort b'));
    w1.pid = 11; // respawned before the send: the run is dropped, and what waited behind it
    await nextIteration();
    expect(sent).to.deep.equal(['abort z', 'run w1 a', 'abort a']);
  });

  it('keeps the caller array untouched', async () => {
    const outbox = new RunOutbox(() => undefined);
    const items = [item('a')];
    const w1 = slotOf('w1', 10);
    outbox.add(w1, items, 1000);
    outbox.add(w1, [item('b')], 1000);
    await nextIteration();
    expect(items.map((i) => i.id)).to.deep.equal(['a']);
  });

  it('keeps the earliest start of the attempts gathered for a worker', async () => {
    const starts: number[] = [];
    const outbox = new RunOutbox((_slot, _items, oldestStart) => starts.push(oldestStart));
    const w1 = slotOf('w1', 10);
    outbox.add(w1, [item('a')], 5000);
    outbox.add(w1, [item('b')], 3000);
    outbox.add(w1, [item('c')], 4000);
    await nextIteration();
    expect(starts).to.deep.equal([3000]);
  });
});

describe('sendRun: attempts whose lease ended before their run message are not sent', () => {
  const LEASE_MS = 30_000;
  const task = (id: string, startedAt: number) => ({ id, attempt: 1, startedAt, partition: 0 }) as ClaimedTask;
  /** A running map that counts its lookups. */
  class CountingMap extends Map<string, RunningAttempt> {
    gets = 0;
    override get(key: string): RunningAttempt | undefined {
      this.gets++;
      return super.get(key);
    }
  }
  const setUp = (now: number) => {
    const clock = new ManualClock(now);
    const warnings: unknown[] = [];
    const deps = { clock, config: { leaseMs: LEASE_MS }, log: { warn: (o: unknown) => warnings.push(o) }, cluster: undefined };
    const told: string[][] = [];
    const slot = {
      id: 'w1',
      pid: 10,
      credits: 0,
      ref: { tell: (_m: string, msg: { tasks: WorkItem[] }) => told.push(msg.tasks.map((t) => t.id)) },
    };
    const running = new CountingMap();
    for (const [id, at] of [
      ['old', 1000],
      ['new', 20_000],
    ] as const)
      running.set(id, { task: task(id, at), workerId: 'w1', startedMono: at });
    const finished: FinishedAttempt[] = [];
    const send = (oldestStart: number) =>
      sendRun(deps as never, running, slot as unknown as WorkerSlot, [item('old'), item('new')], oldestStart, (r) => finished.push(...r));
    return { send, told, finished, running, slot, warnings };
  };

  it('within the lease of the earliest start: all sent, no attempt looked up', () => {
    const t = setUp(1000 + LEASE_MS - 1);
    t.send(1000);
    expect(t.told).to.deep.equal([['old', 'new']]);
    expect(t.running.gets).to.equal(0);
    expect(t.finished).to.deep.equal([]);
  });

  it('a message the channel cannot write (RangeError) goes again one attempt per message: only the one at fault is lost', async () => {
    const t = setUp(1000);
    const sent: string[][] = [];
    (t.slot.ref as unknown as { tell: unknown }).tell = (_m: string, msg: { tasks: WorkItem[] }, onError: (err: unknown) => void) => {
      const ids = msg.tasks.map((x) => x.id);
      if (ids.includes('old')) queueMicrotask(() => onError(new RangeError('Maximum call stack size exceeded')));
      else sent.push(ids);
    };
    t.send(1000);
    await new Promise((r) => setImmediate(r));
    expect(sent).to.deep.equal([['new']]);
    expect(t.finished.map((f) => [f.id, f.outcome.kind])).to.deep.equal([['old', 'failed']]);
    expect(t.warnings).to.have.length(1);
  });

  it('past it (a stall): the attempt whose lease ended is recorded lost and its slot given back; the others go', () => {
    const t = setUp(1000 + LEASE_MS);
    t.send(1000);
    expect(t.told).to.deep.equal([['new']]);
    expect(t.finished.map((f) => [f.id, f.outcome.kind])).to.deep.equal([['old', 'failed']]);
    expect(t.slot.credits).to.equal(1);
    expect(t.warnings).to.have.length(1);
  });
});
