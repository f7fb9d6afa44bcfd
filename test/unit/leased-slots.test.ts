import { expect } from 'chai';
import { LeasedSlots, SlotSource } from '../../src/cluster/redis/leased-slots';
import { ManualClock } from '../../src/domain/clock';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);
const OPTIONS = { ttlMs: 15_000, renewMs: 5000, idleMs: 250, pollMs: 200, retryAfterMs: 1000, batch: 8 };

/** Lets the source's resolved promises run their callbacks. */
const flush = () => new Promise((r) => setImmediate(r));

/** A slot source in memory: one set of leases under a limit; `lost` ids are reported lost at the next renewal. */
function fakeSource(limit: number) {
  const leases = new Set<string>();
  const calls: string[] = [];
  const lost = new Set<string>();
  const source: SlotSource & { up: boolean } = {
    up: true,
    async acquire(l, wanted, holder) {
      calls.push(`acquire ${wanted}`);
      const granted = Math.max(0, Math.min(wanted, l - leases.size));
      for (let i = 1; i <= granted; i++) leases.add(`${holder}:${i}`);
      return granted;
    },
    async renew(keep, release) {
      calls.push(`renew ${keep.length} release ${release.length}`);
      for (const id of release) leases.delete(id);
      const gone = keep.filter((id) => lost.has(id));
      for (const id of gone) leases.delete(id);
      return gone;
    },
  };
  return { source, leases, calls, lost, limit };
}

/** A key limited to 2 whose two slots this node leased and both attempts took. */
async function bothSlotsTaken() {
  const clock = new ManualClock(T0);
  const f = fakeSource(2);
  const slots = new LeasedSlots(2, 'n1', f.source, clock, OPTIONS, () => undefined);
  slots.tryTake(T0);
  await flush();
  expect([slots.tryTake(T0), slots.tryTake(T0)]).to.deep.equal([true, true]);
  return { clock, f, slots };
}

describe("LeasedSlots (a concurrency key's slots leased from a shared set)", () => {
  it('asks for slots on the first start (false meanwhile), then spends the grant synchronously', async () => {
    const clock = new ManualClock(T0);
    const f = fakeSource(3);
    let wakes = 0;
    const slots = new LeasedSlots(3, 'n1', f.source, clock, OPTIONS, () => wakes++);
    expect(slots.tryTake(T0)).to.equal(false);
    expect(slots.tryTake(T0), 'one request at a time').to.equal(false);
    await flush();
    expect(f.calls).to.deep.equal(['acquire 3']);
    expect(wakes).to.equal(1);
    expect([slots.tryTake(T0), slots.tryTake(T0), slots.tryTake(T0)]).to.deep.equal([true, true, true]);
    expect(slots.leased).to.equal(3);
    slots.close();
    await flush();
    expect(f.leases.size, 'close gives every slot back').to.equal(0);
  });

  it('a slot left free for idleMs goes back; one taken again meanwhile stays', async () => {
    const { clock, f, slots } = await bothSlotsTaken();
    slots.giveBack();
    expect(slots.tryTake(T0), 'the free slot is reused without a round trip').to.equal(true);
    slots.giveBack();
    clock.advance(250);
    await flush();
    expect(f.leases.size).to.equal(1);
    expect(slots.leased).to.equal(1);
    slots.close();
  });

  it('an empty grant asks again after pollMs (a wake), and held leases are renewed every renewMs', async () => {
    const clock = new ManualClock(T0);
    const f = fakeSource(1);
    f.leases.add('other:1:1');
    let wakes = 0;
    const slots = new LeasedSlots(1, 'n1', f.source, clock, OPTIONS, () => wakes++);
    expect(slots.tryTake(T0)).to.equal(false);
    await flush();
    expect(wakes, 'an empty grant wakes nobody at once').to.equal(0);
    f.leases.clear(); // the other node's lease ended
    clock.advance(200);
    expect(wakes, 'the poll wakes the key').to.equal(1);
    expect(slots.tryTake(clock.now())).to.equal(false);
    await flush();
    expect(slots.tryTake(clock.now())).to.equal(true);
    clock.advance(5000);
    await flush();
    expect(f.calls.at(-1)).to.equal('renew 1 release 0');
    slots.close();
  });

  it('a key at its limit asks the set once per pollMs, however often the dispatcher tries it', async () => {
    const clock = new ManualClock(T0);
    const f = fakeSource(1);
    f.leases.add('other:1:1');
    let wakes = 0;
    const slots = new LeasedSlots(1, 'n1', f.source, clock, OPTIONS, () => wakes++);
    for (let pass = 0; pass < 50; pass++) {
      expect(slots.tryTake(clock.now())).to.equal(false);
      await flush();
    }
    expect(f.calls, 'one acquire, then the poll waits').to.deep.equal(['acquire 1']);
    expect(wakes).to.equal(0);
    clock.advance(200);
    expect(wakes).to.equal(1);
    for (let pass = 0; pass < 50; pass++) {
      expect(slots.tryTake(clock.now())).to.equal(false);
      await flush();
    }
    expect(f.calls).to.deep.equal(['acquire 1', 'acquire 1']);
    slots.close();
  });

  it('a lease lost at renewal (it expired, or the server lost the set) is asked for again for the attempt it backed', async () => {
    const { clock, f, slots } = await bothSlotsTaken();
    const first = [...f.leases][0];
    f.lost.add(first);
    clock.advance(5000);
    await flush();
    await flush();
    expect(f.calls.slice(-2)).to.deep.equal(['renew 2 release 0', 'acquire 2']);
    expect(slots.leased, 'a new slot backs the attempt again').to.equal(2);
    expect(f.leases.size, 'the set counts both running attempts').to.equal(2);
    expect(f.leases.has(first)).to.equal(false);
    expect(slots.tryTake(clock.now()), 'both slots back running attempts').to.equal(false);
    slots.close();
  });

  it('a lost lease whose slot another node took meanwhile leaves its attempt unbacked until it ends', async () => {
    const { clock, f, slots } = await bothSlotsTaken();
    const first = [...f.leases][0];
    f.lost.add(first);
    f.source.renew = async (keep) => {
      f.leases.delete(first);
      f.leases.add('other:1:1'); // taken by another node before this one asks again
      return keep.filter((id) => id === first);
    };
    clock.advance(5000);
    await flush();
    await flush();
    expect(slots.leased).to.equal(1);
    slots.giveBack(); // the unbacked attempt ends first: the held slot still backs the other
    expect(slots.tryTake(clock.now()), 'one leased slot, held by the attempt still running').to.equal(false);
    slots.close();
  });

  it('starts made without a lease while the source was down ask for slots when it is back (reback)', async () => {
    const clock = new ManualClock(T0);
    const f = fakeSource(3);
    const slots = new LeasedSlots(3, 'n1', f.source, clock, OPTIONS, () => undefined);
    f.source.up = false;
    expect([slots.tryTake(T0), slots.tryTake(T0)]).to.deep.equal([true, true]);
    expect(f.leases.size).to.equal(0);
    f.source.up = true;
    slots.reback();
    await flush();
    expect(f.leases.size, 'the set counts the two attempts and one free slot').to.equal(3);
    expect(slots.tryTake(T0 + 2000), 'one slot of the limit is left').to.equal(true);
    expect(slots.tryTake(T0 + 2000)).to.equal(false);
    slots.giveBack();
    slots.giveBack();
    slots.giveBack();
    clock.advance(250);
    await flush();
    expect(f.leases.size, 'all three given back once idle').to.equal(0);
    slots.close();
  });

  it('while the source is down (or after a failed request) starts are allowed without a lease and counted', async () => {
    const clock = new ManualClock(T0);
    const f = fakeSource(1);
    let fallbacks = 0;
    const slots = new LeasedSlots(1, 'n1', f.source, clock, OPTIONS, () => undefined, {
      lease: () => undefined,
      fallback: () => fallbacks++,
    });
    f.source.up = false;
    expect([slots.tryTake(T0), slots.tryTake(T0)]).to.deep.equal([true, true]);
    expect(fallbacks).to.equal(2);
    f.source.up = true;
    f.source.acquire = () => Promise.reject(new Error('timeout'));
    expect(slots.tryTake(T0)).to.equal(false);
    await flush();
    expect(slots.tryTake(T0 + 10), 'local decision for retryAfterMs').to.equal(true);
    expect(slots.tryTake(T0 + 1000)).to.equal(false);
    slots.close();
  });
});
