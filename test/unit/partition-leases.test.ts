import { expect } from 'chai';
import type { OwnershipEnd, PartitionLeasesOptions } from '../../src/cluster/ownership';
import { PartitionLeases } from '../../src/cluster/partition-leases';
import { PartitionFences } from '../../src/cluster/partition-fences';
import { ManualClock } from '../../src/domain/clock';
import { partitionsFor } from '../../src/domain/rendezvous';
import { ClusterStore } from '../../src/storage/cluster-store';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';

const P = 8;
const TTL = 3000; // rounds every 1000 ms, safety margin 600 ms
const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

type Mode = 'ok' | 'frozen' | 'failing';

/** A member under test: its component, what it was told, and a switch on its view of the store. */
interface Member {
  id: string;
  leases: PartitionLeases;
  fences: PartitionFences;
  log: Array<{ at: number; kind: 'acquired' | OwnershipEnd; partition: number; epoch: number }>;
  /** ok; frozen (every store call hangs: a SIGSTOPped process); failing (every call rejects). */
  mode: Mode;
  /** Rejecters of the calls that hang while frozen (thawed after the test). */
  hanging: Array<(err: Error) => void>;
  /** When set, every fencePartition call waits for it first (a slow fence). */
  fenceGate: Promise<void> | null;
}

/**
 * Ownership logic on a manual clock (no sleeps), several members sharing one SQLite store (the
 * cluster part of the contract is the same on every adapter; the conformance suite checks it).
 */
describe('PartitionLeases (partition ownership by leases) with a manual clock', () => {
  let store: SqliteStore;
  let clock: ManualClock;
  let members: Member[];

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(P);
    clock = new ManualClock(T0);
    members = [];
  });

  afterEach(async () => {
    for (const m of members) {
      m.mode = 'ok';
      for (const reject of m.hanging.splice(0)) reject(new Error('thawed'));
      await m.leases.stop();
    }
    await store.close();
  });

  function member(id: string, instance?: string, extra: Partial<PartitionLeasesOptions> = {}): Member {
    const m: Member = { id, fences: new PartitionFences(), log: [], mode: 'ok', hanging: [], fenceGate: null, leases: null as never };
    const view = new Proxy(store, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver);
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          if (m.mode === 'frozen') return new Promise((_, reject) => m.hanging.push(reject));
          if (m.mode === 'failing') return Promise.reject(new Error('store unreachable'));
          if (prop === 'fencePartition' && m.fenceGate)
            return m.fenceGate.then(() => (v as (...a: unknown[]) => unknown).apply(target, args));
          return (v as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    }) as ClusterStore;
    m.leases = new PartitionLeases({
      store: view,
      clock,
      fences: m.fences,
      memberId: id,
      ...(instance ? { instance } : {}),
      ...extra,
      partitions: P,
      ttlMs: TTL,
      events: {
        acquired: (partition, epoch) => m.log.push({ at: clock.now(), kind: 'acquired', partition, epoch }),
        stopped: (partition, epoch, why) => m.log.push({ at: clock.now(), kind: why, partition, epoch }),
      },
    });
    members.push(m);
    return m;
  }

  /** Moves the clock in `stepMs` steps, letting every round that fires finish. */
  async function run(ms: number, stepMs = 100): Promise<void> {
    for (let t = 0; t < ms; t += stepMs) {
      clock.advance(stepMs);
      await Promise.all(members.filter((m) => m.mode === 'ok').map((m) => m.leases.settled()));
    }
  }

  const owned = (m: Member) => m.leases.status().owned;
  const all = Array.from({ length: P }, (_, p) => p);

  it('a lone member acquires every partition with epoch 1 at its first round and fences them', async () => {
    const a = member('a');
    await a.leases.start();
    expect(owned(a)).to.deep.equal(all);
    expect(a.leases.status()).to.include({ joined: true, liveMembers: 1 });
    expect(a.log.map((e) => [e.kind, e.partition, e.epoch])).to.have.deep.members(all.map((p) => ['acquired', p, 1]));
    expect(a.fences.tokensFor([0, 7])).to.deep.equal([1, 1]);
    expect((await store.listLeases()).every((l) => l.owner === 'a' && l.expiresAt === T0 + TTL)).to.equal(true);
  });

  it('renews at a third of the TTL: the leases move forward and nothing stops', async () => {
    const a = member('a');
    await a.leases.start();
    await run(1000);
    expect((await store.listLeases()).map((l) => l.expiresAt)).to.deep.equal(all.map(() => T0 + 1000 + TTL));
    await run(10_000);
    expect(owned(a)).to.deep.equal(all);
    expect(a.log.filter((e) => e.kind !== 'acquired')).to.deep.equal([]);
    expect((await store.listLeases()).every((l) => l.epoch === 1 && l.expiresAt >= clock.now() + TTL - 1000)).to.equal(true);
  });

  it('hand-over on join: the owner releases what rendezvous gives the newcomer, which then acquires it (epoch 2)', async () => {
    const a = member('a');
    await a.leases.start();
    const b = member('b');
    await b.leases.start();
    expect(owned(b)).to.deep.equal([]); // held by a: b waits, never steals
    await run(2000);
    const bWants = partitionsFor('b', ['a'], P);
    expect(bWants.length).to.be.greaterThan(0);
    expect(owned(b)).to.deep.equal(bWants);
    expect(owned(a)).to.deep.equal(all.filter((p) => !bWants.includes(p)));
    for (const p of bWants) {
      const released = a.log.find((e) => e.partition === p && e.kind === 'handed_over')!;
      const acquired = b.log.find((e) => e.partition === p && e.kind === 'acquired')!;
      expect(acquired.epoch).to.equal(2);
      expect(released.at).to.be.at.most(acquired.at);
      expect(a.fences.epochOf(p)).to.equal(undefined);
      expect(a.fences.mayStart(p, 1)).to.equal(true); // given up, not lost: claims a answered with epoch 1 start
      expect(b.fences.epochOf(p)).to.equal(2);
    }
    expect(a.log.filter((e) => e.kind === 'lost' || e.kind === 'expired')).to.deep.equal([]);
  });

  it("take-over after a member's TTL: a frozen member stops its owners before its leases end; the survivor takes them within one TTL", async () => {
    const a = member('a');
    const b = member('b');
    await a.leases.start();
    await b.leases.start();
    await run(3000);
    const bHeld = owned(b);
    expect(bHeld.length).to.be.greaterThan(0);
    const frozenAt = clock.now(); // b's last round (heartbeat and renewals) ran at this instant
    b.mode = 'frozen';
    await run(TTL + 1000, 50);
    // b stopped its owners (timer) at its deadline: before its leases ended in the store
    for (const p of bHeld) {
      const stop = b.log.find((e) => e.partition === p && e.kind === 'expired')!;
      expect(stop.at).to.be.at.most(frozenAt + TTL - 600);
      const take = a.log.find((e) => e.partition === p && e.kind === 'acquired' && e.at > frozenAt)!;
      expect(take.at).to.be.within(frozenAt + TTL, frozenAt + TTL + 100);
      expect(take.epoch).to.equal(3); // 1: a at start, 2: b after hand-over, 3: a again
      expect(b.fences.mayStart(p)).to.equal(false); // lost: b starts nothing of it
    }
    expect(owned(a)).to.deep.equal(all);
    expect(b.fences.size).to.equal(0);
  });

  it("take-over with rounds out of phase: the survivor wakes when the dead member's record expires, not at its next round", async () => {
    const a = member('a');
    await a.leases.start(); // a's rounds at T0 + k·1000
    await run(500);
    const b = member('b');
    await b.leases.start(); // b's rounds at T0 + 500 + k·1000
    await run(3000);
    const bHeld = owned(b);
    expect(bHeld.length).to.be.greaterThan(0);
    const frozenAt = clock.now(); // b's last round ran at this instant (T0 + 3500)
    b.mode = 'frozen';
    await run(TTL + 1000, 50);
    for (const p of bHeld) {
      const take = a.log.find((e) => e.partition === p && e.kind === 'acquired' && e.at > frozenAt)!;
      // b's record and leases end at frozenAt + TTL; a's own next round would come 500 ms later
      expect(take.at).to.be.within(frozenAt + TTL, frozenAt + TTL + 100);
    }
    expect(owned(a)).to.deep.equal(all);
  });

  it('a fence slower than the TTL: the new lease is renewed while it runs, and its owner starts once it is done', async () => {
    const a = member('a');
    let openGate!: () => void;
    a.fenceGate = new Promise<void>((resolve) => (openGate = resolve));
    const joining = a.leases.start(); // resolves once the first grants are fenced
    // Rounds run on the clock; the fences wait at the gate. Let the event loop run each step.
    const flush = async () => {
      for (let i = 0; i < 20; i++) await new Promise<void>((resolve) => setImmediate(resolve));
    };
    for (let t = 0; t < 3 * TTL; t += 100) {
      clock.advance(100);
      await flush();
    }
    expect(a.leases.status()).to.deep.include({ owned: [], fencing: all });
    expect(a.log).to.deep.equal([]); // no owner before its fence
    expect(a.fences.size).to.equal(0); // and no token: nothing fired or claimed
    const leases = await store.listLeases();
    expect(leases.every((l) => l.owner === 'a' && l.epoch === 1 && l.expiresAt > clock.now())).to.equal(true); // renewed meanwhile
    openGate();
    await joining;
    expect(owned(a)).to.deep.equal(all);
    expect(a.log.map((e) => [e.kind, e.partition, e.epoch])).to.have.deep.members(all.map((p) => ['acquired', p, 1]));
    expect(a.fences.tokensFor([0, 7])).to.deep.equal([1, 1]);
  });

  it('a refused renewal (lease taken meanwhile) stops the owner at that round, with the fence revoked', async () => {
    const a = member('a');
    await a.leases.start();
    // Somebody else got partition 5 (e.g. after a pause the store saw as an expiry).
    await store.releaseLease(5, 'a', 1);
    expect((await store.acquireLease(5, 'intruder', clock.now(), TTL)).granted).to.equal(true);
    await run(1000);
    const stop = a.log.find((e) => e.partition === 5 && e.kind !== 'acquired')!;
    expect(stop).to.include({ kind: 'lost', epoch: 1, at: T0 + 1000 });
    expect(a.fences.epochOf(5)).to.equal(undefined);
    expect(owned(a)).to.not.include(5);
  });

  it('renewals failing (store unreachable) stop the owners at the safety deadline, then recover when the store answers', async () => {
    const a = member('a');
    await a.leases.start();
    await run(1000); // renewed at T0 + 1000
    a.mode = 'failing';
    await run(3000, 50);
    expect(owned(a)).to.deep.equal([]);
    const stops = a.log.filter((e) => e.kind === 'expired');
    expect(stops).to.have.length(P);
    for (const s of stops) expect(s.at).to.equal(T0 + 1000 + TTL - 600);
    a.mode = 'ok';
    await run(TTL + 1000);
    expect(owned(a)).to.deep.equal(all);
    expect(a.log.filter((e) => e.kind === 'acquired' && e.epoch === 2)).to.have.length(P);
  });

  it('the clock going back 10 s loses nothing and never shortens a lease in the store', async () => {
    const a = member('a');
    await a.leases.start();
    await run(2000);
    const before = await store.listLeases();
    clock.set(clock.now() - 10_000);
    await run(15_000);
    expect(owned(a)).to.deep.equal(all);
    expect(a.log.filter((e) => e.kind !== 'acquired')).to.deep.equal([]);
    const after = await store.listLeases();
    after.forEach((l, i) => expect(l.expiresAt).to.be.at.least(before[i].expiresAt));
    expect(after.every((l) => l.epoch === 1)).to.equal(true);
  });

  it('stop() releases every lease and leaves: another member takes them at its next round', async () => {
    const a = member('a');
    const b = member('b');
    await a.leases.start();
    await b.leases.start();
    await run(3000);
    const aHeld = owned(a);
    await a.leases.stop();
    expect(a.log.filter((e) => e.kind === 'shutdown').map((e) => e.partition)).to.deep.equal(aHeld);
    // Given up, not lost: what a claimed before the stop still starts (its drain runs it), nothing more is claimed.
    for (const p of aHeld) expect(a.fences.mayStart(p), `partition ${p}`).to.equal(true);
    expect(a.fences.tokensFor(aHeld)).to.deep.equal(aHeld.map(() => -1));
    expect((await store.listLiveMembers(clock.now())).map((m) => m.memberId)).to.deep.equal(['b']);
    await run(1000);
    expect(owned(b)).to.deep.equal(all);
  });

  it('stop() says it left (events.left, after the release); roundSoon() on another member takes the leases at once, not at its next round', async () => {
    const a = member('a');
    const b = member('b');
    let left = 0;
    (a.leases as unknown as { o: { events: { left?: () => void } } }).o.events.left = () => left++;
    await a.leases.start();
    await b.leases.start();
    await run(3000);
    await a.leases.stop();
    expect(left, 'told once, after leaving').to.equal(1);
    expect((await store.listLiveMembers(clock.now())).map((m) => m.memberId)).to.deep.equal(['b']);
    await b.leases.roundSoon(); // the clock does not move: no round of its own would run now
    await b.leases.settled();
    expect(owned(b)).to.deep.equal(all);
  });

  it('a member that joins or hands partitions over says so (events.changed): with the others running a round on it, the share moves at once, not at the next rounds', async () => {
    const a = member('a');
    const b = member('b');
    const told: string[] = [];
    // A bus stand-in: each announcement runs a round on the other member, as the `left` channel does.
    for (const [m, other] of [
      [a, b],
      [b, a],
    ] as const)
      (m.leases as unknown as { o: { events: { changed?: () => void } } }).o.events.changed = () => {
        told.push(m.id);
        void other.leases.roundSoon();
      };
    await a.leases.start();
    expect(told).to.deep.equal(['a']); // joined
    await b.leases.start(); // b joins: a hands over and says so; b takes its share; the clock does not move
    for (let i = 0; i < 5; i++) await Promise.all([a.leases.settled(), b.leases.settled()]);
    const bWants = partitionsFor('b', ['a'], P);
    expect(owned(b)).to.deep.equal(bWants);
    expect(owned(a)).to.deep.equal(all.filter((p) => !bWants.includes(p)));
    expect(told).to.deep.equal(['a', 'b', 'a']); // a joined, b joined, a handed over
    await run(5000);
    expect(told, 'nothing more to say while nothing changes').to.have.length(3);
  });

  it('roundSoon() during a round runs another right after it (the running one may have read the members before the news)', async () => {
    const a = member('a');
    await a.leases.start();
    const b = member('b');
    await b.leases.start();
    await run(3000);
    const gate: { open: () => void } = { open: () => undefined };
    // b's next round is running when a leaves: that round read the members with a still in them.
    const hold = new Promise<void>((resolve) => (gate.open = resolve));
    const original = store.listLiveMembers.bind(store);
    let held = false;
    (store as unknown as { listLiveMembers: typeof original }).listLiveMembers = async (now: number) => {
      const live = await original(now);
      if (!held) {
        held = true;
        await hold;
      }
      return live;
    };
    const running = b.leases.round();
    await new Promise((r) => setImmediate(r));
    await a.leases.stop();
    void b.leases.roundSoon();
    gate.open();
    await running;
    (store as unknown as { listLiveMembers: typeof original }).listLiveMembers = original;
    clock.advance(1); // the rerun is armed 1 ms after the round that ran
    await b.leases.settled();
    expect(owned(b)).to.deep.equal(all);
  });

  it('one member id, two processes: the one whose record expired is fenced out by the one that took it over', async () => {
    const first = member('x', 'first');
    await first.leases.start();
    await run(1000);
    expect(owned(first)).to.deep.equal(all);
    first.mode = 'frozen'; // SIGSTOP: no heartbeat, no renewal
    await run(TTL + 100);
    expect(owned(first)).to.deep.equal([]); // its own deadline timers stopped its owners
    const second = member('x', 'second'); // a restart elsewhere with the same MEMBER_ID
    await second.leases.start();
    await run(1000);
    expect(owned(second)).to.deep.equal(all);
    expect((await store.listLiveMembers(clock.now())).map((m) => m.instance)).to.deep.equal(['second']);
    first.mode = 'ok'; // SIGCONT: its next heartbeat is refused
    for (const reject of first.hanging.splice(0)) reject(new Error('thawed'));
    await first.leases.round();
    await run(5000);
    expect(first.leases.status()).to.include({ fencedOut: true, joined: false });
    expect(owned(first)).to.deep.equal([]);
    expect(first.log.filter((e) => e.kind === 'acquired').map((e) => e.epoch)).to.satisfy((epochs: number[]) =>
      epochs.every((e) => e === 1),
    );
    expect(owned(second)).to.deep.equal(all);
    expect(second.log.filter((e) => e.kind !== 'acquired')).to.deep.equal([]);
    await first.leases.stop(); // a fenced-out process leaves the other's record alone
    expect((await store.listLiveMembers(clock.now())).map((m) => m.instance)).to.deep.equal(['second']);
  });

  it('each member records its bus; a member on another bus is warned of once per change and counted, and the agreement again logged', async () => {
    const warned: object[] = [];
    const infos: object[] = [];
    const gauge: number[] = [];
    const log = { warn: (o: object) => warned.push(o), error: () => undefined, info: (o: object) => infos.push(o) };
    const metrics = {
      owned: () => undefined,
      renewed: () => undefined,
      acquired: () => undefined,
      ended: () => undefined,
      otherBus: (n: number) => gauge.push(n),
    };
    const a = member('a', undefined, { bus: 'redis', log, metrics });
    await a.leases.start();
    expect(warned).to.deep.equal([]);
    const b = member('b', undefined, { bus: 'postgres' }); // started without REDIS_URL
    const c = member('c'); // says no bus (an older version): left out
    await b.leases.start();
    await c.leases.start();
    expect((await store.listLiveMembers(clock.now())).map((m) => [m.memberId, m.bus])).to.deep.equal([
      ['a', 'redis'],
      ['b', 'postgres'],
      ['c', null],
    ]);
    await run(3000);
    expect(warned).to.deep.equal([{ member_id: 'a', bus: 'redis', other_buses: ['b=postgres'] }]); // once, not at every round
    expect(gauge.at(-1)).to.equal(1);
    await b.leases.stop();
    await run(1000);
    expect(infos).to.deep.equal([{ member_id: 'a', bus: 'redis' }]);
    expect(gauge.at(-1)).to.equal(0);
    expect(warned).to.have.length(1);
  });

  it('refuses a safety margin that leaves no time between renewals', () => {
    expect(
      () =>
        new PartitionLeases({
          store,
          clock,
          fences: new PartitionFences(),
          memberId: 'x',
          partitions: 1,
          ttlMs: 3000,
          safetyMarginMs: 2000,
          events: { acquired: () => undefined, stopped: () => undefined },
        }),
    ).to.throw(RangeError, /safetyMarginMs/);
  });
});
