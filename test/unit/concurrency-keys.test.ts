import { expect } from 'chai';
import { ConcurrencyLimits, SharedSlots } from '../../src/domain/concurrency-limits';
import { ReadyQueues } from '../../src/domain/ready-queues';
import { DueEntry } from '../../src/domain/task';
import { TokenBucket } from '../../src/domain/token-bucket';
import { dueEntry } from './helpers/fixtures';

const ids = (entries: { id: string }[]): string[] => entries.map((e) => e.id);

describe('concurrency keys', () => {
  describe('ConcurrencyLimits', () => {
    it('an unlimited key always gets a slot and is counted', () => {
      const c = new ConcurrencyLimits();
      for (let i = 0; i < 5; i++) expect(c.tryAcquire('k', 0)).to.equal(true);
      expect(c.runningOf('k')).to.equal(5);
      expect(c.maxRunningOf('k')).to.equal(null);
    });

    it('a limit caps the slots; a release frees one; a count never goes below zero', () => {
      const c = new ConcurrencyLimits();
      c.set('k', 2);
      expect([c.tryAcquire('k', 0), c.tryAcquire('k', 0), c.tryAcquire('k', 0)]).to.deep.equal([true, true, false]);
      c.release('k', 0);
      expect(c.tryAcquire('k', 0)).to.equal(true);
      for (let i = 0; i < 5; i++) c.release('k', 0);
      expect(c.runningOf('k')).to.equal(0);
      expect([c.tryAcquire('k', 0), c.tryAcquire('k', 0), c.tryAcquire('k', 0)]).to.deep.equal([true, true, false]);
    });

    it('a limit set while tasks of the key run counts them at once', () => {
      const c = new ConcurrencyLimits();
      for (let i = 0; i < 3; i++) c.tryAcquire('k', 0);
      c.set('k', 2);
      expect(c.tryAcquire('k', 0)).to.equal(false);
      c.release('k', 0);
      expect(c.tryAcquire('k', 0), '2 running after one release: still full').to.equal(false);
      c.release('k', 0);
      expect(c.tryAcquire('k', 0)).to.equal(true);
    });

    it('refuses a limit that is not an integer in 1..100000, and tells listeners of each change', () => {
      const c = new ConcurrencyLimits();
      const heard: string[] = [];
      c.onChange((k) => heard.push(k));
      for (const bad of [0, -1, 1.5, 100_001, NaN]) expect(() => c.set('k', bad)).to.throw(RangeError);
      c.set('a', 1);
      c.set('a', null);
      expect(heard).to.deep.equal(['a', 'a']);
      expect(c.snapshot()).to.deep.equal([]);
    });

    it('with shared slots, a start also needs a slot held by this node; a release gives it back', () => {
      let held = 1;
      const given: number[] = [];
      const shared: SharedSlots = {
        tryTake: () => (held > 0 ? (held--, true) : false),
        giveBack: (now) => (held++, given.push(now)),
        setLimit: () => undefined,
        close: () => undefined,
      };
      const c = new ConcurrencyLimits({ slots: () => shared });
      c.set('k', 5);
      expect([c.tryAcquire('k', 1), c.tryAcquire('k', 2)]).to.deep.equal([true, false]);
      expect(c.runningOf('k')).to.equal(1);
      c.release('k', 3);
      expect(given).to.deep.equal([3]);
      expect(c.tryAcquire('unlimited', 4), 'an unlimited key needs no shared slot').to.equal(true);
    });
  });

  describe('ReadyQueues with concurrency keys', () => {
    function queues(limits: Record<string, number>, buckets: { type?: Record<string, TokenBucket> } = {}) {
      const c = new ConcurrencyLimits();
      for (const [k, n] of Object.entries(limits)) c.set(k, n);
      const q = new ReadyQueues({ concurrency: c, typeBucket: (t) => buckets.type?.[t] ?? null });
      return { c, q };
    }
    const keyed = (id: string, key: string, o: Partial<DueEntry> = {}) => dueEntry({ id, concurrencyKey: key, ...o });

    it('a full key sets its entries aside: the entries behind them in the same tenant still start', () => {
      const { q, c } = queues({ hot: 3 });
      for (let i = 0; i < 10; i++) q.add(keyed(`hot-${i}`, 'hot', { dueAt: i, seq: i }));
      for (let i = 0; i < 5; i++) q.add(dueEntry({ id: `other-${i}`, dueAt: 100 + i, seq: 100 + i }));
      const first = q.take(100, 1000);
      expect(ids(first)).to.deep.equal(['hot-0', 'hot-1', 'hot-2', 'other-0', 'other-1', 'other-2', 'other-3', 'other-4']);
      expect(c.runningOf('hot')).to.equal(3);
      expect(q.setAside).to.equal(7);
      expect(q.size, 'set-aside entries are still held').to.equal(7);
      expect(q.take(100, 1000)).to.deep.equal([]);
    });

    it('a freed slot brings back the best entry set aside on its key, and only on its key', () => {
      const { q } = queues({ a: 1, b: 1 });
      q.add(keyed('a-0', 'a', { dueAt: 0, seq: 1 }));
      q.add(keyed('a-1', 'a', { dueAt: 2, seq: 2 }));
      q.add(keyed('a-2', 'a', { dueAt: 1, seq: 3, priority: 'high' }));
      q.add(keyed('b-0', 'b', { dueAt: 0, seq: 4 }));
      q.add(keyed('b-1', 'b', { dueAt: 1, seq: 5 }));
      expect(ids(q.take(10, 10))).to.deep.equal(['a-2', 'b-0']); // high first inside the tenant
      q.releaseKey('b', 11);
      expect(ids(q.take(10, 11))).to.deep.equal(['b-1']);
      q.releaseKey('a', 12);
      expect(ids(q.take(10, 12))).to.deep.equal(['a-0']);
      q.releaseKey('a', 13);
      expect(ids(q.take(10, 13))).to.deep.equal(['a-1']);
      expect(q.size).to.equal(0);
    });

    it("one tenant's full key does not hold up another tenant", () => {
      const { q } = queues({ shared: 2 });
      for (let i = 0; i < 50; i++) q.add(keyed(`t1-${i}`, 'shared', { tenantId: 't1', dueAt: i, seq: i }));
      for (let i = 0; i < 3; i++) q.add(dueEntry({ id: `t2-${i}`, tenantId: 't2', dueAt: 1000 + i, seq: 1000 + i }));
      const out = ids(q.take(10, 2000));
      expect(out.filter((id) => id.startsWith('t1-'))).to.have.length(2);
      expect(out.filter((id) => id.startsWith('t2-'))).to.deep.equal(['t2-0', 't2-1', 't2-2']);
    });

    it('a refused claim gives its slot back and the next entry of the key comes forward', () => {
      const { q, c } = queues({ k: 1 });
      q.add(keyed('k-0', 'k', { seq: 1 }));
      q.add(keyed('k-1', 'k', { seq: 2 }));
      const [taken] = q.take(10, 0);
      expect(q.take(10, 0)).to.deep.equal([]);
      q.refund([taken], 1);
      expect(c.runningOf('k')).to.equal(0);
      expect(ids(q.take(10, 1))).to.deep.equal(['k-1']);
    });

    it('raising or removing a limit brings back what was set aside (reconsiderKey)', () => {
      const { q, c } = queues({ k: 1 });
      for (let i = 0; i < 6; i++) q.add(keyed(`k-${i}`, 'k', { seq: i }));
      expect(q.take(10, 0)).to.have.length(1);
      c.set('k', 3);
      q.reconsiderKey('k');
      expect(ids(q.take(10, 0))).to.deep.equal(['k-1', 'k-2']);
      c.set('k', null);
      q.reconsiderKey('k');
      expect(ids(q.take(10, 0))).to.deep.equal(['k-3', 'k-4', 'k-5']);
    });

    it('an entry parked by an empty token bucket takes no slot of its key', () => {
      const bucket = new TokenBucket(1, 1, 0);
      const { q, c } = queues({ k: 5 }, { type: { slow: bucket } });
      q.add(keyed('s-0', 'k', { taskType: 'slow', seq: 1 }));
      q.add(keyed('s-1', 'k', { taskType: 'slow', seq: 2 }));
      expect(ids(q.take(10, 0))).to.deep.equal(['s-0']);
      expect(c.runningOf('k')).to.equal(1);
      expect(ids(q.take(10, 1000)), 'a token a second later').to.deep.equal(['s-1']);
    });

    it('a duplicate add of an entry set aside is ignored', () => {
      const { q } = queues({ k: 1 });
      const e0 = keyed('k-0', 'k', { seq: 1 });
      const e1 = keyed('k-1', 'k', { seq: 2 });
      q.add(e0);
      q.add(e1);
      q.take(10, 0);
      q.add({ ...e1 });
      expect(q.size).to.equal(1);
      q.releaseKey('k', 1);
      expect(ids(q.take(10, 1))).to.deep.equal(['k-1']);
      expect(q.take(10, 1)).to.deep.equal([]);
    });
  });
});
