import { expect } from 'chai';
import { LeasedBucket, TokenSource } from '../../src/cluster/redis/leased-bucket';
import { ManualClock } from '../../src/domain/clock';
import { ReadyQueues } from '../../src/domain/ready-queues';
import { DueEntry } from '../../src/domain/task';

const T0 = 1_700_000_000_000;

/** A shared bucket stand-in: each take is answered when the test says so. */
class FakeSource implements TokenSource {
  up = true;
  tokens = 0;
  waitMs = 250;
  given = 0;
  readonly requests: Array<{ wanted: number; answer: () => void; fail: () => void }> = [];
  take(wanted: number): Promise<{ granted: number; waitMs: number }> {
    return new Promise((resolve, reject) => {
      this.requests.push({
        wanted,
        answer: () => {
          const granted = Math.min(wanted, this.tokens);
          this.tokens -= granted;
          resolve({ granted, waitMs: this.tokens > 0 ? 0 : this.waitMs });
        },
        fail: () => reject(new Error('unreachable')),
      });
    });
  }
  async give(count: number): Promise<void> {
    this.given += count;
  }
}

const tick = () => new Promise((r) => setImmediate(r));

function setup(opts: { batch?: number; burst?: number } = {}) {
  const clock = new ManualClock(T0);
  const source = new FakeSource();
  const events = { leases: [] as string[], fallbacks: 0 };
  let wakes = 0;
  const bucket = new LeasedBucket(
    'task_type',
    { ratePerSecond: 10, burst: opts.burst ?? 10 },
    T0,
    source,
    clock,
    { batch: opts.batch ?? 3, leaseTtlMs: 1000, retryAfterMs: 500 },
    () => wakes++,
    { lease: (_k, r) => events.leases.push(r), fallback: () => events.fallbacks++ },
  );
  return { clock, source, bucket, events, wakes: () => wakes };
}

describe('LeasedBucket (tokens leased in batches from a shared bucket)', () => {
  it('an empty stock asks once for a batch, answers Infinity meanwhile, and wakes the caller on the reply', async () => {
    const { source, bucket, wakes, clock } = setup();
    source.tokens = 10;
    expect(bucket.nextTokenAt(T0)).to.equal(Infinity);
    expect(bucket.tryTake(T0)).to.equal(false);
    expect(source.requests).to.have.length(1); // one request in flight at a time
    expect(source.requests[0].wanted).to.equal(3);
    source.requests[0].answer();
    await tick();
    expect(wakes()).to.equal(1);
    expect(bucket.leased).to.equal(3);
    expect([bucket.tryTake(clock.now()), bucket.tryTake(clock.now()), bucket.tryTake(clock.now())]).to.deep.equal([true, true, true]);
    expect(bucket.tryTake(clock.now())).to.equal(false); // asks again
    expect(source.requests).to.have.length(2);
  });

  it('below half a batch the next lease is asked for while tokens remain (no park at the boundary)', async () => {
    const { source, bucket } = setup({ batch: 4 });
    source.tokens = 100;
    bucket.nextTokenAt(T0);
    source.requests[0].answer();
    await tick();
    expect(bucket.tryTake(T0)).to.equal(true); // 3 left
    expect(source.requests).to.have.length(1);
    expect(bucket.tryTake(T0)).to.equal(true); // 2 left
    expect(bucket.tryTake(T0)).to.equal(true); // 1 left < 2: prefetch
    expect(source.requests).to.have.length(2);
    source.requests[1].answer();
    await tick();
    expect(bucket.leased).to.equal(5);
  });

  it('a reply without tokens gives the ETA of the next one: the parked queue times its release to it', async () => {
    const { source, bucket, clock, events } = setup();
    source.tokens = 0;
    source.waitMs = 250;
    bucket.nextTokenAt(T0);
    source.requests[0].answer();
    await tick();
    expect(events.leases).to.deep.equal(['empty']);
    expect(bucket.nextTokenAt(T0 + 10)).to.equal(T0 + 250);
    expect(source.requests).to.have.length(1); // no request before the ETA
    clock.set(T0 + 250);
    expect(bucket.nextTokenAt(T0 + 250)).to.equal(Infinity);
    expect(source.requests).to.have.length(2);
  });

  it('refund puts a token back into the leased stock, or into the local bucket while that decides', async () => {
    const { source, bucket, clock } = setup();
    source.tokens = 10;
    bucket.tryTake(T0);
    source.requests[0].answer();
    await tick();
    expect(bucket.tryTake(clock.now())).to.equal(true);
    expect(bucket.leased).to.equal(2);
    bucket.refund(clock.now());
    expect(bucket.leased).to.equal(3);
    source.up = false;
    const local = [] as boolean[];
    for (let i = 0; i < 11; i++) local.push(bucket.tryTake(clock.now()));
    expect(local.filter(Boolean)).to.have.length(10); // the local bucket's burst
    bucket.refund(clock.now());
    expect(bucket.tryTake(clock.now())).to.equal(true);
  });

  it('gives back a stock older than the lease TTL', async () => {
    const { source, bucket, clock } = setup();
    source.tokens = 10;
    bucket.nextTokenAt(T0);
    source.requests[0].answer();
    await tick();
    expect(bucket.tryTake(T0)).to.equal(true);
    clock.set(T0 + 1000);
    expect(bucket.nextTokenAt(T0 + 1000)).to.equal(Infinity); // stock expired: a fresh lease is asked for
    expect(source.given).to.equal(2);
    expect(bucket.leased).to.equal(0);
  });

  it('while the source is down, the local bucket decides and each start it allows is counted', () => {
    const { source, bucket, events } = setup({ burst: 2 });
    source.up = false;
    expect([bucket.tryTake(T0), bucket.tryTake(T0), bucket.tryTake(T0)]).to.deep.equal([true, true, false]);
    expect(bucket.nextTokenAt(T0)).to.equal(T0 + 100);
    expect(events.fallbacks).to.equal(2);
    expect(source.requests).to.have.length(0);
  });

  it('a failed request falls back to local limits for retryAfterMs, then tries Redis again', async () => {
    const { source, bucket, clock, events, wakes } = setup();
    bucket.nextTokenAt(T0);
    source.requests[0].fail();
    await tick();
    expect(events.leases).to.deep.equal(['failed']);
    expect(wakes()).to.equal(1);
    expect(bucket.tryTake(T0)).to.equal(true); // local bucket (full)
    expect(events.fallbacks).to.equal(1);
    clock.set(T0 + 500);
    expect(bucket.nextTokenAt(T0 + 500)).to.equal(Infinity);
    expect(source.requests).to.have.length(2);
  });

  it('drives ReadyQueues: a parked type starts once the lease arrives, other types flow meanwhile', async () => {
    const { source, bucket } = setup();
    const q = new ReadyQueues({ typeBucket: (t) => (t === 'limited' ? bucket : null) });
    const entry = (id: string, taskType: string): DueEntry => ({
      id,
      partition: 0,
      seq: 0,
      dueAt: T0,
      priority: 'medium',
      tenantId: 't',
      taskType,
      state: 'PENDING',
    });
    q.add(entry('a', 'limited'));
    q.add(entry('b', 'free'));
    expect(q.take(10, T0).map((e) => e.id)).to.deep.equal(['b']);
    expect(q.nextReleaseAt(T0)).to.equal(null); // no timer: the reply wakes the dispatcher
    source.tokens = 5;
    source.requests[0].answer();
    await tick();
    expect(q.take(10, T0).map((e) => e.id)).to.deep.equal(['a']);
  });
});
