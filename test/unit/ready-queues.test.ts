import { expect } from 'chai';
import { compareReady, ReadyQueues } from '../../src/domain/ready-queues';
import { DueEntry } from '../../src/domain/task';
import { dueEntry } from './helpers/fixtures';
import { TokenBucket } from '../../src/domain/token-bucket';

const ids = (entries: { id: string }[]): string[] => entries.map((e) => e.id);

describe('ReadyQueues', () => {
  describe('inside one tenant', () => {
    it('takes high before medium before low', () => {
      const q = new ReadyQueues();
      q.add(dueEntry({ id: 'low', priority: 'low', dueAt: 1, seq: 1 }));
      q.add(dueEntry({ id: 'med', priority: 'medium', dueAt: 1, seq: 2 }));
      q.add(dueEntry({ id: 'high', priority: 'high', dueAt: 1, seq: 3 }));
      expect(ids(q.take(3, 0))).to.deep.equal(['high', 'med', 'low']);
    });

    it('priority beats due time: a high due later runs before a low due earlier', () => {
      const q = new ReadyQueues();
      q.add(dueEntry({ id: 'old-low', priority: 'low', dueAt: 100, seq: 1 }));
      q.add(dueEntry({ id: 'new-high', priority: 'high', dueAt: 900, seq: 2 }));
      expect(ids(q.take(2, 0))).to.deep.equal(['new-high', 'old-low']);
    });

    it('same priority: oldest due first, then submission order (seq)', () => {
      const q = new ReadyQueues();
      q.add(dueEntry({ id: 'due300', dueAt: 300, seq: 1 }));
      q.add(dueEntry({ id: 'due100-seq5', dueAt: 100, seq: 5 }));
      q.add(dueEntry({ id: 'due100-seq2', dueAt: 100, seq: 2 }));
      q.add(dueEntry({ id: 'due200', dueAt: 200, seq: 3 }));
      expect(ids(q.take(10, 0))).to.deep.equal(['due100-seq2', 'due100-seq5', 'due200', 'due300']);
    });

    it('an entry added again with a new priority or due time (a PATCH) takes the place of the one queued; the same one again is ignored', () => {
      const q = new ReadyQueues();
      for (let i = 0; i < 4; i++) q.add(dueEntry({ id: `low${i}`, priority: 'low', dueAt: 1, seq: i }));
      q.add(dueEntry({ id: 'low3', priority: 'high', dueAt: 1, seq: 3 }));
      q.add(dueEntry({ id: 'low2', priority: 'low', dueAt: 1, seq: 2 })); // the same entry: nothing changes
      q.add(dueEntry({ id: 'low1', priority: 'low', dueAt: 5, seq: 1 })); // due later: behind low2
      expect(q.size).to.equal(4);
      expect(q.sizeOf('tenant-a')).to.equal(4);
      expect(ids(q.take(10, 0))).to.deep.equal(['low3', 'low0', 'low2', 'low1']);
      expect(q.size).to.equal(0);
      expect(q.sizeOf('tenant-a')).to.equal(0);
      expect([...q.tenants()]).to.deep.equal([]);
      // Taken once each: a later add of a taken id is a new entry.
      q.add(dueEntry({ id: 'low3', priority: 'medium', dueAt: 1, seq: 3 }));
      expect(ids(q.take(10, 0))).to.deep.equal(['low3']);
    });

    it('an entry set aside on its full concurrency key is kept as it is when added again with a new priority', () => {
      let free = 0;
      const q = new ReadyQueues({ concurrency: { tryAcquire: () => free-- > 0, release: () => free++ } });
      q.add(dueEntry({ id: 'k1', priority: 'low', dueAt: 1, seq: 1, concurrencyKey: 'k' }));
      expect(q.take(1, 0)).to.deep.equal([]); // set aside
      q.add(dueEntry({ id: 'k1', priority: 'high', dueAt: 1, seq: 1, concurrencyKey: 'k' }));
      expect(q.setAside).to.equal(1);
      free = 1;
      q.reconsiderKey('k');
      const taken = q.take(5, 0);
      expect(ids(taken)).to.deep.equal(['k1']);
      expect(taken[0].priority).to.equal('low');
    });

    it('compareReady: priority, then dueAt, then seq', () => {
      const e = (o: Partial<DueEntry>): DueEntry => dueEntry({ id: 'x', dueAt: 10, seq: 10, priority: 'medium', ...o });
      expect(compareReady(e({ priority: 'high' }), e({ priority: 'medium' }))).to.be.below(0);
      expect(compareReady(e({ priority: 'low' }), e({ priority: 'medium' }))).to.be.above(0);
      expect(compareReady(e({ dueAt: 5 }), e({ dueAt: 6 }))).to.be.below(0);
      expect(compareReady(e({ seq: 9 }), e({ seq: 8 }))).to.be.above(0);
      expect(compareReady(e({}), e({}))).to.equal(0);
    });
  });

  describe('between tenants', () => {
    it("a tenant with 1,000 queued entries does not hold back another tenant's single entry", () => {
      const q = new ReadyQueues();
      for (let i = 0; i < 1000; i++) q.add(dueEntry({ id: `big-${i}`, tenantId: 'big', dueAt: i, seq: i }));
      q.add(dueEntry({ id: 'small-0', tenantId: 'small', dueAt: 5000, seq: 5000 }));

      const firstTwo = [...q.take(1, 0), ...q.take(1, 0)];
      expect(ids(firstTwo)).to.include('small-0');
      expect(q.size).to.equal(999);
    });

    it('the same holds when the first two are taken in one batch', () => {
      const q = new ReadyQueues();
      for (let i = 0; i < 1000; i++) q.add(dueEntry({ id: `big-${i}`, tenantId: 'big', seq: i }));
      q.add(dueEntry({ id: 'small-0', tenantId: 'small', priority: 'low', seq: 1001 }));
      expect(ids(q.take(2, 0))).to.include('small-0');
    });

    it('alternates between equally weighted tenants while both have work', () => {
      const q = new ReadyQueues();
      for (let i = 0; i < 3; i++) {
        q.add(dueEntry({ id: `a${i}`, tenantId: 'A', seq: i }));
        q.add(dueEntry({ id: `b${i}`, tenantId: 'B', seq: 10 + i }));
      }
      expect(q.take(6, 0).map((e) => e.tenantId)).to.deep.equal(['A', 'B', 'A', 'B', 'A', 'B']);
    });

    it('follows the tenant weights (3:1)', () => {
      const q = new ReadyQueues({ weightOf: (t) => (t === 'gold' ? 3 : 1) });
      for (let i = 0; i < 40; i++) {
        q.add(dueEntry({ id: `g${i}`, tenantId: 'gold', seq: i }));
        q.add(dueEntry({ id: `s${i}`, tenantId: 'silver', seq: 100 + i }));
      }
      const taken = q.take(40, 0).map((e) => e.tenantId);
      expect(taken.filter((t) => t === 'gold')).to.have.lengthOf(30);
      expect(taken.filter((t) => t === 'silver')).to.have.lengthOf(10);
    });

    it("keeps each tenant's own priority order while interleaving", () => {
      const q = new ReadyQueues();
      q.add(dueEntry({ id: 'A-low', tenantId: 'A', priority: 'low', seq: 1 }));
      q.add(dueEntry({ id: 'A-high', tenantId: 'A', priority: 'high', seq: 2 }));
      q.add(dueEntry({ id: 'B-med', tenantId: 'B', priority: 'medium', seq: 3 }));
      q.add(dueEntry({ id: 'B-high', tenantId: 'B', priority: 'high', seq: 4 }));
      expect(ids(q.take(4, 0))).to.deep.equal(['A-high', 'B-high', 'A-low', 'B-med']);
    });
  });

  describe('bookkeeping', () => {
    it('size counts queued entries across tenants and falls as they are taken', () => {
      const q = new ReadyQueues();
      expect(q.size).to.equal(0);
      q.add(dueEntry({ id: '1', tenantId: 'A' }));
      q.add(dueEntry({ id: '2', tenantId: 'B' }));
      q.add(dueEntry({ id: '3', tenantId: 'B' }));
      expect(q.size).to.equal(3);
      q.take(2, 0);
      expect(q.size).to.equal(1);
      q.take(5, 0);
      expect(q.size).to.equal(0);
    });

    it('ignores a duplicate id from another tenant or of another task type; one with other fields but the same priority and due time', () => {
      const q = new ReadyQueues();
      q.add(dueEntry({ id: 'dup', tenantId: 'A', priority: 'low', dueAt: 1 }));
      q.add(dueEntry({ id: 'dup', tenantId: 'B', priority: 'high', dueAt: 1 }));
      q.add(dueEntry({ id: 'dup', tenantId: 'A', taskType: 'other', priority: 'high', dueAt: 1 }));
      q.add(dueEntry({ id: 'dup', tenantId: 'A', priority: 'low', dueAt: 1, queue: 'q2' }));
      expect(q.size).to.equal(1);
      const out = q.take(10, 0);
      expect(out).to.have.lengthOf(1);
      expect(out[0]).to.include({ priority: 'low', tenantId: 'A', taskType: 'noop' });
    });

    it('an id can be added again once it has been taken', () => {
      const q = new ReadyQueues();
      q.add(dueEntry({ id: 'x' }));
      expect(ids(q.take(1, 0))).to.deep.equal(['x']);
      q.add(dueEntry({ id: 'x' }));
      expect(q.size).to.equal(1);
      expect(ids(q.take(1, 0))).to.deep.equal(['x']);
    });

    it('take(n) returns at most n, and an empty array when empty or n = 0', () => {
      const q = new ReadyQueues();
      expect(q.take(5, 0)).to.deep.equal([]);
      for (let i = 0; i < 5; i++) q.add(dueEntry({ id: `e${i}` }));
      expect(q.take(0, 0)).to.deep.equal([]);
      expect(q.take(3, 0)).to.have.lengthOf(3);
      expect(q.take(3, 0)).to.have.lengthOf(2);
      expect(q.take(3, 0)).to.deep.equal([]);
    });

    it('a tenant that empties and returns starts with fresh credit (no stored debt)', () => {
      const q = new ReadyQueues();
      q.add(dueEntry({ id: 'a1', tenantId: 'A' }));
      q.add(dueEntry({ id: 'b1', tenantId: 'B' }));
      q.add(dueEntry({ id: 'b2', tenantId: 'B' }));
      expect(ids(q.take(2, 0))).to.deep.equal(['a1', 'b1']); // A now empty and forgotten
      q.add(dueEntry({ id: 'a2', tenantId: 'A' }));
      q.add(dueEntry({ id: 'b3', tenantId: 'B' }));
      expect(
        q
          .take(3, 0)
          .map((e) => e.tenantId)
          .sort(),
      ).to.deep.equal(['A', 'B', 'B']);
      expect(q.size).to.equal(0);
    });
  });

  describe('weights, aging and rate limits (manual time)', () => {
    const T0 = 1_700_000_000_000;

    it('tenants weighted 3:1, both saturated, get dispatch counts within 5 % of 3:1 over any 400 starts', () => {
      const q = new ReadyQueues({ weightOf: (t) => (t === 'A' ? 3 : 1) });
      for (let i = 0; i < 10_000; i++) {
        q.add(dueEntry({ id: `a${i}`, tenantId: 'A', seq: i }));
        q.add(dueEntry({ id: `b${i}`, tenantId: 'B', seq: i }));
      }
      for (let round = 0; round < 10; round++) {
        const taken = q.take(400, T0 + round);
        const a = taken.filter((e) => e.tenantId === 'A').length;
        const b = taken.length - a;
        expect(a / b).to.be.within(3 * 0.95, 3 * 1.05);
      }
    });

    it('refund: the tokens of entries whose claim was refused come back, so the next entry starts at once', () => {
      const typeBucket = new TokenBucket(1, 1, T0);
      const tenantBucket = new TokenBucket(1, 1, T0);
      const q = new ReadyQueues({ typeBucket: () => typeBucket, tenantBucket: () => tenantBucket });
      q.add(dueEntry({ id: 'cancelled', priority: 'high', seq: 0 }));
      q.add(dueEntry({ id: 'real', priority: 'low', seq: 1 }));
      const [first] = q.take(2, T0);
      expect(first.id).to.equal('cancelled');
      expect(q.take(1, T0)).to.deep.equal([]); // both buckets are empty for a second
      q.refund([first], T0); // its claim was refused: it never started
      expect(q.take(1, T0).map((e) => e.id)).to.deep.equal(['real']);
    });

    it('refund gives each token back to the bucket it came from, once, even after the limits changed', () => {
      let typeBucket: TokenBucket | null = null; // no limit when the entry is taken
      const q = new ReadyQueues({ typeBucket: () => typeBucket });
      q.add(dueEntry({ id: 'a', seq: 0 }));
      q.add(dueEntry({ id: 'b', seq: 1 }));
      const [a] = q.take(1, T0);
      typeBucket = new TokenBucket(1, 1, T0); // a limit set while a's claim is in flight
      const [b] = q.take(1, T0);
      q.refund([a], T0); // a took no token: nothing to give back
      expect(typeBucket.tryTake(T0)).to.equal(false);
      q.refund([b, b], T0);
      expect([typeBucket.tryTake(T0), typeBucket.tryTake(T0)]).to.deep.equal([true, false]);
    });

    it('aging: a low task behind a continuous stream of high tasks starts once it has waited agingMs', () => {
      const agingMs = 5_000;
      const q = new ReadyQueues({ agingMs });
      q.add(dueEntry({ id: 'low', priority: 'low', dueAt: T0, seq: 0 }));
      let startedAt: number | null = null;
      for (let step = 0; step < 20_000 && startedAt === null; step++) {
        const now = T0 + step; // one start per millisecond, a new high task every millisecond
        q.add(dueEntry({ id: `h${step}`, priority: 'high', dueAt: now, seq: step + 1 }));
        if (q.take(1, now)[0].id === 'low') startedAt = now;
      }
      expect(startedAt).to.equal(T0 + agingMs);
    });

    it('without aging the same low task waits behind every high task', () => {
      const q = new ReadyQueues({});
      q.add(dueEntry({ id: 'low', priority: 'low', dueAt: T0, seq: 0 }));
      for (let step = 0; step < 1000; step++) {
        q.add(dueEntry({ id: `h${step}`, priority: 'high', dueAt: T0 + step, seq: step + 1 }));
        expect(q.take(1, T0 + step)[0].id).to.not.equal('low');
      }
    });

    it('a limit of 100/s (burst 10) on send_email: 3,000 tasks start at ≤ 110 in any 1 s window and take ≈ 30 s; noop is not slowed', () => {
      const buckets = new Map([['send_email', new TokenBucket(100, 10, T0)]]);
      const waits: string[] = [];
      const q = new ReadyQueues({ typeBucket: (t) => buckets.get(t) ?? null, onWait: (kind, key) => waits.push(`${kind}:${key}`) });
      for (let i = 0; i < 3000; i++) q.add(dueEntry({ id: `m${i}`, taskType: 'send_email', dueAt: T0, seq: i }));
      for (let i = 0; i < 100; i++) q.add(dueEntry({ id: `n${i}`, taskType: 'noop', dueAt: T0, seq: 5000 + i }));
      const starts: number[] = [];
      const noopStarts: number[] = [];
      let now = T0;
      while (q.size > 0) {
        const batch = q.take(64, now);
        for (const e of batch) (e.taskType === 'noop' ? noopStarts : starts).push(now);
        if (batch.length === 64) continue; // a full batch: more may start at this instant
        const next = q.nextReleaseAt(now);
        if (q.size > 0) expect(next, 'parked work always has a release time').to.be.a('number');
        now = Math.max(now + 1, next ?? now + 1);
      }
      expect(noopStarts.every((t) => t === T0)).to.equal(true);
      for (let i = 0; i < starts.length; i++) {
        let j = i;
        while (j < starts.length && starts[j] < starts[i] + 1000) j++;
        expect(j - i, `window from ${starts[i] - T0} ms`).to.be.at.most(110);
      }
      const total = starts[starts.length - 1] - starts[0];
      expect(total).to.be.within(29_000, 30_000);
      expect(waits.filter((w) => w === 'task_type:send_email').length).to.be.at.least(1);
    });

    it('a tenant limit parks that tenant only; the other tenant keeps flowing', () => {
      const buckets = new Map([['A', new TokenBucket(1, 1, T0)]]);
      const q = new ReadyQueues({ tenantBucket: (t) => buckets.get(t) ?? null });
      for (let i = 0; i < 5; i++) {
        q.add(dueEntry({ id: `a${i}`, tenantId: 'A', seq: i }));
        q.add(dueEntry({ id: `b${i}`, tenantId: 'B', seq: i }));
      }
      const first = q.take(10, T0);
      expect(first.filter((e) => e.tenantId === 'A')).to.have.length(1);
      expect(first.filter((e) => e.tenantId === 'B')).to.have.length(5);
      expect(q.nextReleaseAt(T0)).to.equal(T0 + 1000);
      expect(q.take(10, T0 + 999)).to.deep.equal([]);
      expect(ids(q.take(10, T0 + 1000))).to.deep.equal(['a1']);
    });
  });
});
