import { expect } from 'chai';
import { claimMember, MemberIdInUseError } from '../../src/cluster/member-claim';
import { ManualClock } from '../../src/domain/clock';
import { StartupError } from '../../src/domain/startup-error';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';

const TTL = 3000;
const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

/** Lets the store's promises and the claim's timers run (the clock does not move). */
const turn = () => new Promise((r) => setImmediate(r));

/** claimMember on a manual clock: a live holder is refused, a dead one's record is waited out. */
describe('claimMember (one live process per member id)', () => {
  let store: SqliteStore;
  let clock: ManualClock;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(4);
    clock = new ManualClock(T0);
  });

  afterEach(async () => {
    await store.close();
  });

  const claim = (instance: string) =>
    claimMember({ store, clock, memberId: 'node-a', instance, address: `host-${instance}:8080`, ttlMs: TTL });

  it('takes a free id, and an id whose record is its own', async () => {
    await claim('one');
    await claim('one');
    expect((await store.listLiveMembers(clock.now())).map((m) => [m.memberId, m.instance])).to.deep.equal([['node-a', 'one']]);
  });

  it('a live holder that keeps heartbeating: refused with a StartupError (exit 78) naming the id', async () => {
    await claim('first');
    let outcome: unknown = 'pending';
    claim('second').then(
      () => (outcome = 'claimed'),
      (err) => (outcome = err),
    );
    for (let t = 0; t < TTL && outcome === 'pending'; t += 100) {
      clock.advance(100);
      if (t % 1000 === 0)
        await store.heartbeatMember({ memberId: 'node-a', address: 'host-first:8080', instance: 'first' }, clock.now(), TTL);
      for (let i = 0; i < 5; i++) await turn();
    }
    expect(outcome).to.be.instanceOf(MemberIdInUseError);
    expect(outcome).to.be.instanceOf(StartupError);
    expect((outcome as StartupError).exitCode).to.equal(78);
    expect((outcome as Error).message)
      .to.contain('"node-a"')
      .and.contain('host-first:8080');
    expect((await store.listLiveMembers(clock.now())).map((m) => m.instance)).to.deep.equal(['first']);
  });

  it('a holder that stopped heartbeating (crashed): the id is taken once its record expires', async () => {
    await claim('crashed');
    const start = clock.now();
    let outcome: unknown = 'pending';
    claim('restarted').then(
      () => (outcome = 'claimed'),
      (err) => (outcome = err),
    );
    for (let t = 0; t < 2 * TTL && outcome === 'pending'; t += 100) {
      clock.advance(100);
      for (let i = 0; i < 5; i++) await turn();
    }
    expect(outcome).to.equal('claimed');
    expect(clock.now() - start)
      .to.be.at.least(TTL)
      .and.at.most(TTL + 200);
    expect((await store.listLiveMembers(clock.now())).map((m) => m.instance)).to.deep.equal(['restarted']);
  });
});
