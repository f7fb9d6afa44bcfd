import { expect } from 'chai';
import { WriteQueue } from '../../src/storage/mongo/write-queue';

/** A write that resolves when the test says so, recording when it started. */
function gate(started: string[], name: string): { op: () => Promise<string>; open: () => void } {
  let open = (): void => undefined;
  const done = new Promise<void>((r) => (open = r));
  return {
    op: async () => {
      started.push(name);
      await done;
      return name;
    },
    open: () => open(),
  };
}

describe('MongoStore write queue: one write at a time, attempt writes first', () => {
  it('runs writes one at a time in call order within a lane', async () => {
    const q = new WriteQueue();
    const started: string[] = [];
    const a = gate(started, 'a');
    const b = gate(started, 'b');
    const ra = q.run(a.op);
    const rb = q.run(b.op);
    await Promise.resolve();
    expect(started).to.deep.equal(['a']);
    a.open();
    expect(await ra).to.equal('a');
    await new Promise((r) => setImmediate(r));
    expect(started).to.deep.equal(['a', 'b']);
    b.open();
    expect(await rb).to.equal('b');
  });

  it('a completion queued behind claims runs as soon as the running write ends, before them', async () => {
    const q = new WriteQueue();
    const started: string[] = [];
    const running = gate(started, 'claim-1');
    const results: Array<Promise<string>> = [q.run(running.op)];
    const order: string[] = [];
    for (const name of ['claim-2', 'claim-3']) results.push(q.run(async () => (order.push(name), name)));
    results.push(q.run(async () => (order.push('complete-1'), 'complete-1'), 'first'));
    results.push(q.run(async () => (order.push('extend-1'), 'extend-1'), 'first'));
    running.open();
    expect(await Promise.all(results)).to.deep.equal(['claim-1', 'claim-2', 'claim-3', 'complete-1', 'extend-1']);
    expect(order).to.deep.equal(['complete-1', 'extend-1', 'claim-2', 'claim-3']);
  });

  it('a failed write rejects its caller only; the next writes run', async () => {
    const q = new WriteQueue();
    const failed = q.run(async () => {
      throw new Error('write refused');
    });
    const sync = q.run((): Promise<string> => {
      throw new Error('thrown before any await');
    });
    const next = q.run(async () => 'next');
    expect(
      await failed.then(
        () => 'resolved',
        (e: Error) => e.message,
      ),
    ).to.equal('write refused');
    expect(
      await sync.then(
        () => 'resolved',
        (e: Error) => e.message,
      ),
    ).to.equal('thrown before any await');
    expect(await next).to.equal('next');
  });

  it('drain resolves once every write queued before it has finished, whatever its lane', async () => {
    const q = new WriteQueue();
    const started: string[] = [];
    const a = gate(started, 'a');
    const b = gate(started, 'b');
    void q.run(a.op);
    void q.run(b.op, 'first');
    let drained = false;
    const d = q.drain().then(() => (drained = true));
    a.open();
    await new Promise((r) => setImmediate(r));
    expect(drained).to.equal(false);
    b.open();
    await d;
    expect(drained).to.equal(true);
    await q.drain(); // idle: at once
  });
});
