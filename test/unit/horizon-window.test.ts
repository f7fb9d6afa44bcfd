import { expect } from 'chai';
import { ManualClock } from '../../src/domain/clock';
import { compareDue, HorizonWindow, HorizonWindowOptions } from '../../src/domain/horizon-window';
import { DueEntry } from '../../src/domain/task';
import { dueEntry } from './helpers/fixtures';

const T = Date.UTC(2026, 0, 1);
const HORIZON = 30_000;

function makeWindow(overrides: Partial<HorizonWindowOptions> = {}): HorizonWindow {
  return new HorizonWindow({ horizonMs: HORIZON, maxTasks: 100, maxOutstanding: 50, ...overrides });
}

/** Loads `entries` the way a partition owner would at time `now`. */
function load(w: HorizonWindow, now: number, entries: DueEntry[]): void {
  w.loaded(entries, w.loadUntil(now), w.loadLimit());
}

const ids = (entries: DueEntry[]): string[] => entries.map((e) => e.id);

describe('HorizonWindow', () => {
  describe('before the first load', () => {
    it('covers nothing: dirty, needs a load, no wake time, offers refused', () => {
      const w = makeWindow();
      expect(w.windowEnd).to.equal(-Infinity);
      expect(w.dirty).to.equal(true);
      expect(w.needsLoad(T)).to.equal(true);
      expect(w.nextWakeAt()).to.equal(null);
      expect(w.offer(dueEntry({ id: 'a', dueAt: T }))).to.equal(false);
      expect(w.has('a')).to.equal(false);
      expect(w.size).to.equal(0);
    });

    it('loadUntil(now) = now + horizon; loadLimit() = maxTasks on an empty window', () => {
      const w = makeWindow();
      expect(w.loadUntil(T)).to.equal(T + HORIZON);
      expect(w.loadLimit()).to.equal(100);
    });
  });

  describe('offer', () => {
    it('accepts up to windowEnd (inclusive) and refuses beyond it', () => {
      const w = makeWindow();
      load(w, T, []);
      expect(w.windowEnd).to.equal(T + HORIZON);
      expect(w.offer(dueEntry({ id: 'at-end', dueAt: T + HORIZON }))).to.equal(true);
      expect(w.offer(dueEntry({ id: 'beyond', dueAt: T + HORIZON + 1 }))).to.equal(false);
      expect(w.has('at-end')).to.equal(true);
      expect(w.has('beyond')).to.equal(false);
      expect(w.size).to.equal(1);
      expect(w.dirty).to.equal(false); // a later load will read the refused one; no need to flag
    });

    it('accepts an entry already due (in the past)', () => {
      const w = makeWindow();
      load(w, T, []);
      expect(w.offer(dueEntry({ id: 'late', dueAt: T - 5000 }))).to.equal(true);
      expect(ids(w.takeDue(T))).to.deep.equal(['late']);
    });

    it('a known id is not added twice', () => {
      const w = makeWindow();
      load(w, T, []);
      expect(w.offer(dueEntry({ id: 'a', dueAt: T + 10 }))).to.equal(true);
      expect(w.offer(dueEntry({ id: 'a', dueAt: T + 10 }))).to.equal(true);
      expect(w.size).to.equal(1);
      expect(ids(w.takeDue(T + 10))).to.deep.equal(['a']);
      expect(w.takeDue(T + 10)).to.deep.equal([]);
    });

    it('a full heap refuses and marks the window dirty', () => {
      const w = makeWindow({ maxTasks: 2 });
      load(w, T, []);
      expect(w.offer(dueEntry({ id: 'a', dueAt: T + 1 }))).to.equal(true);
      expect(w.offer(dueEntry({ id: 'b', dueAt: T + 2 }))).to.equal(true);
      expect(w.dirty).to.equal(false);
      expect(w.offer(dueEntry({ id: 'c', dueAt: T + 3 }))).to.equal(false);
      expect(w.dirty).to.equal(true);
      expect(w.has('c')).to.equal(false);
    });

    it("a heap full of one tenant's entries still takes another tenant's, up to an even share", () => {
      const w = makeWindow({ maxTasks: 4 });
      load(w, T, []);
      for (let i = 0; i < 4; i++) expect(w.offer(dueEntry({ id: `a${i}`, dueAt: T + i, tenantId: 'A' }))).to.equal(true);
      expect(w.offer(dueEntry({ id: 'a4', dueAt: T + 4, tenantId: 'A' }))).to.equal(false);
      // B holds nothing: its share of a full window is 4 / 2 tenants = 2 entries.
      expect(w.offer(dueEntry({ id: 'b0', dueAt: T + 5, tenantId: 'B' }))).to.equal(true);
      expect(w.offer(dueEntry({ id: 'b1', dueAt: T + 6, tenantId: 'B' }))).to.equal(true);
      expect(w.offer(dueEntry({ id: 'b2', dueAt: T + 7, tenantId: 'B' }))).to.equal(false);
      expect(w.size).to.equal(6);
      expect(w.dirty).to.equal(true);
      // A load skips what does not fit, tenant by tenant, and keeps the window dirty.
      load(w, T, [dueEntry({ id: 'c0', dueAt: T + 1, tenantId: 'C' }), dueEntry({ id: 'a5', dueAt: T + 1, tenantId: 'A' })]);
      expect(w.has('c0')).to.equal(true);
      expect(w.has('a5')).to.equal(false);
      expect(w.dirty).to.equal(true);
    });
  });

  describe('takeDue: never early', () => {
    it('returns nothing before the due time and exactly the due ones at due time', () => {
      const clock = new ManualClock(T);
      const w = makeWindow();
      load(w, clock.now(), [
        dueEntry({ id: 'd1000', dueAt: T + 1000 }),
        dueEntry({ id: 'd2000', dueAt: T + 2000 }),
        dueEntry({ id: 'd2000b', dueAt: T + 2000 }),
        dueEntry({ id: 'd5000', dueAt: T + 5000 }),
      ]);

      expect(w.takeDue(clock.now())).to.deep.equal([]);
      clock.advance(999);
      expect(w.takeDue(clock.now())).to.deep.equal([]);
      clock.advance(1);
      expect(ids(w.takeDue(clock.now()))).to.deep.equal(['d1000']);
      clock.advance(999);
      expect(w.takeDue(clock.now())).to.deep.equal([]);
      clock.advance(1);
      expect(ids(w.takeDue(clock.now()))).to.deep.equal(['d2000', 'd2000b']);
      expect(w.size).to.equal(1);
      expect(w.outstandingCount).to.equal(3);
    });

    it('never returns an entry early when now goes backwards after a load', () => {
      const clock = new ManualClock(T + 500);
      const w = makeWindow();
      load(w, clock.now(), [dueEntry({ id: 'a', dueAt: T + 1000 }), dueEntry({ id: 'b', dueAt: T + 3000 })]);
      const windowEnd = w.windowEnd;

      clock.set(T - 60_000); // NTP step back after the load
      expect(w.takeDue(clock.now())).to.deep.equal([]);

      // a load while the clock is behind must not shrink the window nor change the due times
      load(w, clock.now(), [dueEntry({ id: 'a', dueAt: T + 1000 })]);
      expect(w.windowEnd).to.equal(windowEnd);
      expect(w.takeDue(clock.now())).to.deep.equal([]);

      clock.set(T + 999);
      expect(w.takeDue(clock.now())).to.deep.equal([]);
      clock.set(T + 1000);
      expect(ids(w.takeDue(clock.now()))).to.deep.equal(['a']);

      clock.set(T + 2000);
      clock.set(T + 100); // back again
      expect(w.takeDue(clock.now())).to.deep.equal([]);
      clock.set(T + 3000);
      expect(ids(w.takeDue(clock.now()))).to.deep.equal(['b']);
    });

    it('hands out in (dueAt, priority, seq) order', () => {
      const w = makeWindow();
      load(w, T, [
        dueEntry({ id: 'late-high', dueAt: T + 20, priority: 'high', seq: 1 }),
        dueEntry({ id: 'early-low', dueAt: T + 10, priority: 'low', seq: 2 }),
        dueEntry({ id: 'early-high-seq4', dueAt: T + 10, priority: 'high', seq: 4 }),
        dueEntry({ id: 'early-high-seq3', dueAt: T + 10, priority: 'high', seq: 3 }),
      ]);
      expect(ids(w.takeDue(T + 100))).to.deep.equal(['early-high-seq3', 'early-high-seq4', 'early-low', 'late-high']);
    });

    it('compareDue: due time, then priority, then seq', () => {
      const e = (o: Partial<DueEntry>): DueEntry => dueEntry({ id: 'x', dueAt: 10, seq: 10, priority: 'medium', ...o });
      expect(compareDue(e({ dueAt: 9, priority: 'low' }), e({ dueAt: 10, priority: 'high' }))).to.be.below(0);
      expect(compareDue(e({ priority: 'high' }), e({ priority: 'low' }))).to.be.below(0);
      expect(compareDue(e({ seq: 11 }), e({ seq: 10 }))).to.be.above(0);
      expect(compareDue(e({}), e({}))).to.equal(0);
    });
  });

  describe('leadMs (claiming ahead)', () => {
    it('hands entries out leadMs before their due time, never earlier, and wakes leadMs before the earliest', () => {
      const w = makeWindow({ leadMs: 300 });
      load(w, T, [dueEntry({ id: 'a', dueAt: T + 1000, seq: 1 }), dueEntry({ id: 'b', dueAt: T + 2000, seq: 2 })]);
      expect(w.nextWakeAt()).to.equal(T + 700);
      expect(w.takeDue(T + 699)).to.deep.equal([]);
      expect(ids(w.takeDue(T + 700))).to.deep.equal(['a']);
      expect(w.nextWakeAt()).to.equal(T + 1700);
      expect(ids(w.takeDue(T + 1700))).to.deep.equal(['b']);
    });
  });

  describe('maxOutstanding', () => {
    it('caps takeDue until release()', () => {
      const w = makeWindow({ maxOutstanding: 3 });
      load(
        w,
        T,
        Array.from({ length: 5 }, (_, i) => dueEntry({ id: `e${i}`, dueAt: T, seq: i })),
      );

      const first = w.takeDue(T);
      expect(ids(first)).to.deep.equal(['e0', 'e1', 'e2']);
      expect(w.outstandingCount).to.equal(3);
      expect(w.takeDue(T + 10_000)).to.deep.equal([]);

      w.release(['e0']);
      expect(w.outstandingCount).to.equal(2);
      expect(ids(w.takeDue(T))).to.deep.equal(['e3']);
      expect(w.takeDue(T)).to.deep.equal([]);

      w.release(['e1', 'e2', 'e3']);
      expect(ids(w.takeDue(T))).to.deep.equal(['e4']);
      expect(w.size).to.equal(0);
    });

    it("a tenant with nothing handed out gets a first slot past the budget (another tenant's backlog does not hold it)", () => {
      const w = makeWindow({ maxOutstanding: 3 });
      load(
        w,
        T,
        Array.from({ length: 5 }, (_, i) => dueEntry({ id: `a${i}`, dueAt: T, seq: i, tenantId: 'A' })),
      );
      expect(ids(w.takeDue(T))).to.deep.equal(['a0', 'a1', 'a2']);
      // B's first task arrives while A fills the budget: it is handed out at once, its second is not.
      w.offer(dueEntry({ id: 'b0', dueAt: T + 1, seq: 10, tenantId: 'B' }));
      w.offer(dueEntry({ id: 'b1', dueAt: T + 2, seq: 11, tenantId: 'B' }));
      expect(ids(w.takeDue(T + 5))).to.deep.equal(['b0']);
      expect(w.outstandingCount).to.equal(4);
      expect(w.takeDue(T + 5)).to.deep.equal([]);
      // Once B's slot is released, B again has a first slot; A waits for the budget.
      w.release(['b0']);
      expect(ids(w.takeDue(T + 5))).to.deep.equal(['b1']);
      w.release(['a0', 'a1']);
      expect(ids(w.takeDue(T + 5))).to.deep.equal(['a3']);
    });

    it('handed-out ids stay known until released; release forgets them', () => {
      const w = makeWindow();
      load(w, T, [dueEntry({ id: 'a', dueAt: T })]);
      w.takeDue(T);
      expect(w.has('a')).to.equal(true);
      expect(w.size).to.equal(0);
      w.release(['a']);
      expect(w.has('a')).to.equal(false);
      expect(w.outstandingCount).to.equal(0);
    });

    it('release ignores unknown ids and ids still waiting in the heap', () => {
      const w = makeWindow();
      load(w, T, [dueEntry({ id: 'waiting', dueAt: T + 1000 })]);
      w.release(['waiting', 'nobody']);
      expect(w.has('waiting')).to.equal(true);
      expect(w.size).to.equal(1);
      expect(ids(w.takeDue(T + 1000))).to.deep.equal(['waiting']);
    });
  });

  describe('loads: dirty / needsLoad', () => {
    it('a load shorter than its limit is complete: not dirty', () => {
      const w = makeWindow();
      load(w, T, [dueEntry({ id: 'a', dueAt: T + 1 })]);
      expect(w.dirty).to.equal(false);
    });

    it('a truncated load (rows = limit) marks the window dirty', () => {
      const w = makeWindow();
      w.loaded([dueEntry({ id: 'a', dueAt: T + 1 }), dueEntry({ id: 'b', dueAt: T + 2 })], w.loadUntil(T), 2);
      expect(w.dirty).to.equal(true);
      expect(w.size).to.equal(2);
    });

    it('a load that overflows the heap keeps maxTasks entries and marks dirty', () => {
      const w = makeWindow({ maxTasks: 3 });
      w.loaded(
        Array.from({ length: 5 }, (_, i) => dueEntry({ id: `e${i}`, dueAt: T + i, seq: i })),
        w.loadUntil(T),
        10,
      );
      expect(w.size).to.equal(3);
      expect(w.dirty).to.equal(true);
      expect(['e0', 'e1', 'e2'].every((id) => w.has(id))).to.equal(true);
      expect(w.has('e3') || w.has('e4')).to.equal(false);
    });

    it('a complete load clears a previous dirty flag', () => {
      const w = makeWindow();
      w.loaded([dueEntry({ id: 'a', dueAt: T + 1 })], w.loadUntil(T), 1);
      expect(w.dirty).to.equal(true);
      load(w, T, [dueEntry({ id: 'a', dueAt: T + 1 }), dueEntry({ id: 'b', dueAt: T + 2 })]);
      expect(w.dirty).to.equal(false);
      expect(w.size).to.equal(2);
    });

    it('needs a refresh from windowEnd − horizon/2 on', () => {
      const w = makeWindow();
      load(w, T, []);
      const refreshAt = T + HORIZON - HORIZON / 2;
      expect(w.needsLoad(T)).to.equal(false);
      expect(w.needsLoad(refreshAt - 1)).to.equal(false);
      expect(w.needsLoad(refreshAt)).to.equal(true);
      expect(w.needsLoad(T + HORIZON + 1)).to.equal(true);
    });

    it('deferRefreshWhileBusy: puts the refresh off to windowEnd − horizon/4 while entries wait to be handed out or are handed out', () => {
      const w = makeWindow({ maxOutstanding: 2, deferRefreshWhileBusy: true });
      const herd = Array.from({ length: 5 }, (_, i) => dueEntry({ id: `h${i}`, dueAt: T + 100, seq: 100 + i }));
      load(w, T, herd);
      expect(ids(w.takeDue(T + 100))).to.deep.equal(['h0', 'h1']); // the budget; h2..h4 wait in their lane
      const half = T + HORIZON - HORIZON / 2;
      const quarter = T + HORIZON - HORIZON / 4;
      expect(w.needsLoad(half)).to.equal(false);
      expect(w.needsLoad(quarter - 1)).to.equal(false);
      expect(w.needsLoad(quarter)).to.equal(true);
      expect(w.nextWakeAt()).to.equal(quarter);

      // The lane empties and all is released: the refresh is due from half a horizon before the end again.
      w.release(['h0', 'h1']);
      expect(ids(w.takeDue(half))).to.deep.equal(['h2', 'h3']);
      w.release(['h2', 'h3']);
      expect(ids(w.takeDue(half))).to.deep.equal(['h4']);
      expect(w.needsLoad(half)).to.equal(false); // h4 is still handed out
      expect(w.nextWakeAt()).to.equal(quarter);
      w.release(['h4']);
      expect(w.needsLoad(half)).to.equal(true);
      expect(w.nextWakeAt()).to.equal(half);
    });

    it('a dirty window needs a load early only once the heap is at most half full', () => {
      const w = makeWindow({ maxTasks: 4 });
      w.loaded(
        Array.from({ length: 4 }, (_, i) => dueEntry({ id: `e${i}`, dueAt: T + i, seq: i })),
        w.loadUntil(T),
        4,
      );
      expect(w.dirty).to.equal(true);
      expect(w.size).to.equal(4);
      expect(w.needsLoad(T)).to.equal(false); // full: a load could not add anything

      w.takeDue(T + 1); // hands out e0, e1 → heap 2 = maxTasks/2
      expect(w.size).to.equal(2);
      expect(w.needsLoad(T + 1)).to.equal(true);
    });

    it('windowEnd only moves forward', () => {
      const w = makeWindow();
      w.loaded([], T + 50_000, 100);
      w.loaded([], T + 10_000, 100);
      expect(w.windowEnd).to.equal(T + 50_000);
    });

    it('loadLimit = room in the heap + everything already known', () => {
      const w = makeWindow({ maxTasks: 100 });
      load(
        w,
        T,
        Array.from({ length: 10 }, (_, i) => dueEntry({ id: `e${i}`, dueAt: T + i, seq: i })),
      );
      w.takeDue(T + 3); // 4 handed out: heap 6, known 10
      expect(w.loadLimit()).to.equal(100 - 6 + 10);
    });
  });

  describe('known ids and later loads', () => {
    it('a later load does not re-add ids already in the heap or handed out (no duplicates)', () => {
      const w = makeWindow();
      const a = dueEntry({ id: 'a', dueAt: T + 1 });
      const b = dueEntry({ id: 'b', dueAt: T + 2 });
      const c = dueEntry({ id: 'c', dueAt: T + 3 });
      const d = dueEntry({ id: 'd', dueAt: T + 4 });
      load(w, T, [a, b]);
      expect(ids(w.takeDue(T + 1))).to.deep.equal(['a']); // a handed out, not yet released

      load(w, T + 1, [a, b, c]);
      expect(w.size).to.equal(2); // b, c
      load(w, T + 2, [a, b, c, d]);
      expect(w.size).to.equal(3); // b, c, d

      const rest = w.takeDue(T + 100);
      expect(ids(rest)).to.deep.equal(['b', 'c', 'd']);
      const all = ['a', ...ids(rest)];
      expect(new Set(all).size).to.equal(all.length);
    });

    it('a released id is read again by a later load (the store still holds it as waiting)', () => {
      const w = makeWindow();
      const a = dueEntry({ id: 'a', dueAt: T });
      load(w, T, [a]);
      w.takeDue(T);
      w.release(['a']); // dropped as stale by the dispatcher
      load(w, T + 1, [a]);
      expect(w.size).to.equal(1);
      expect(ids(w.takeDue(T + 1))).to.deep.equal(['a']);
    });
  });

  describe('nextWakeAt', () => {
    it('deferRefreshWhileBusy: the refresh a quarter horizon before the end while an entry is handed out', () => {
      const w = makeWindow({ maxOutstanding: 1, deferRefreshWhileBusy: true });
      load(w, T, [dueEntry({ id: 'a', dueAt: T + 100, seq: 1 }), dueEntry({ id: 'b', dueAt: T + 20_000, seq: 2 })]);
      w.takeDue(T + 100);
      expect(w.nextWakeAt()).to.equal(T + HORIZON - HORIZON / 4);
      w.release(['a']);
      expect(w.nextWakeAt()).to.equal(T + HORIZON / 2);
    });

    it('without deferRefreshWhileBusy (cluster mode) the refresh stays half a horizon before the end while busy', () => {
      const w = makeWindow({ maxOutstanding: 1 });
      load(w, T, [dueEntry({ id: 'a', dueAt: T + 100, seq: 1 }), dueEntry({ id: 'b', dueAt: T + 100, seq: 2 })]);
      w.takeDue(T + 100); // 'a' out, 'b' waits in its lane
      expect(w.needsLoad(T + HORIZON / 2)).to.equal(true);
    });

    it('is the refresh time of an empty window', () => {
      const w = makeWindow();
      load(w, T, []);
      expect(w.nextWakeAt()).to.equal(T + HORIZON / 2);
    });

    it('is the earliest due time when that comes before the refresh time', () => {
      const w = makeWindow();
      load(w, T, [dueEntry({ id: 'b', dueAt: T + 2000 }), dueEntry({ id: 'a', dueAt: T + 1000 })]);
      expect(w.nextWakeAt()).to.equal(T + 1000);
      w.takeDue(T + 1000);
      expect(w.nextWakeAt()).to.equal(T + 2000);
    });

    it('is the refresh time when the earliest due time is later', () => {
      const w = makeWindow();
      load(w, T, [dueEntry({ id: 'a', dueAt: T + 20_000 })]);
      expect(w.nextWakeAt()).to.equal(T + HORIZON / 2);
    });

    it('ignores due entries while the outstanding budget is spent, until release', () => {
      const w = makeWindow({ maxOutstanding: 1 });
      load(w, T, [dueEntry({ id: 'a', dueAt: T + 100, seq: 1 }), dueEntry({ id: 'b', dueAt: T + 200, seq: 2 })]);
      w.takeDue(T + 100);
      expect(w.nextWakeAt()).to.equal(T + HORIZON / 2); // the refresh only
      w.release(['a']);
      expect(w.nextWakeAt()).to.equal(T + 200);
    });
  });

  describe('an entry offered again with a new due time (PATCH reschedule)', () => {
    it('replaces the held entry: earlier fires earlier, later does not fire at the old time', () => {
      const w = new HorizonWindow({ horizonMs: 30_000, maxTasks: 100, maxOutstanding: 100 });
      w.loaded([dueEntry({ id: 'a', dueAt: 10_000, seq: 1 }), dueEntry({ id: 'b', dueAt: 5_000, seq: 2 })], 30_000, 1000);
      expect(w.offer(dueEntry({ id: 'a', dueAt: 2_000, seq: 1 }))).to.equal(true);
      expect(w.offer(dueEntry({ id: 'b', dueAt: 20_000, seq: 2 }))).to.equal(true);
      expect(w.size).to.equal(2);
      expect(w.takeDue(2_000).map((e) => e.id)).to.deep.equal(['a']);
      expect(w.takeDue(10_000).map((e) => e.id)).to.deep.equal([]);
      expect(w.takeDue(20_000).map((e) => e.id)).to.deep.equal(['b']);
    });

    it('a move beyond the window drops the held entry until a later load', () => {
      const w = new HorizonWindow({ horizonMs: 30_000, maxTasks: 100, maxOutstanding: 100 });
      w.loaded([dueEntry({ id: 'a', dueAt: 10_000, seq: 1 })], 30_000, 1000);
      expect(w.offer(dueEntry({ id: 'a', dueAt: 60_000, seq: 1 }))).to.equal(false);
      expect(w.has('a')).to.equal(false);
      expect(w.takeDue(60_000)).to.deep.equal([]);
    });
  });

  describe('tenant lanes (head-of-line blocking between tenants)', () => {
    it("a tenant's backlog does not hold back another tenant's task that became due later", () => {
      const w = makeWindow({ maxTasks: 2000, maxOutstanding: 10 });
      load(
        w,
        T,
        Array.from({ length: 1000 }, (_, i) => dueEntry({ id: `a${i}`, tenantId: 'A', dueAt: T, seq: i })),
      );
      expect(w.takeDue(T)).to.have.length(10);
      w.offer(dueEntry({ id: 'b0', tenantId: 'B', dueAt: T + 5, seq: 5000 }));
      w.release(['a0', 'a1']); // the dispatcher claimed two: two credits
      expect(ids(w.takeDue(T + 5))).to.include('b0'); // not behind A's 990 waiting entries
    });

    it('hands out by tenant weight (3:1) while both have due entries, oldest first inside each', () => {
      const w = makeWindow({ maxTasks: 2000, maxOutstanding: 40, weightOf: (t) => (t === 'A' ? 3 : 1) });
      const entries = [];
      for (let i = 0; i < 100; i++) {
        entries.push(dueEntry({ id: `a${i}`, tenantId: 'A', dueAt: T + i, seq: i }));
        entries.push(dueEntry({ id: `b${i}`, tenantId: 'B', dueAt: T + i, seq: 1000 + i }));
      }
      load(w, T, entries);
      const out = w.takeDue(T + 1000);
      expect(out.filter((e) => e.tenantId === 'A')).to.have.length(30);
      expect(ids(out.filter((e) => e.tenantId === 'B'))).to.deep.equal(Array.from({ length: 10 }, (_, i) => `b${i}`));
    });

    it('an entry superseded while it waited in a lane is handed out once, at its new time', () => {
      const w = makeWindow({ maxTasks: 100, maxOutstanding: 1 });
      load(w, T, [dueEntry({ id: 'x', dueAt: T, seq: 1 }), dueEntry({ id: 'y', dueAt: T, seq: 2 })]);
      expect(ids(w.takeDue(T))).to.deep.equal(['x']); // y waits in its lane: no credit left
      w.offer(dueEntry({ id: 'y', dueAt: T + 10_000, seq: 2 })); // rescheduled
      w.release(['x']);
      expect(w.takeDue(T + 1)).to.deep.equal([]);
      expect(ids(w.takeDue(T + 10_000))).to.deep.equal(['y']);
      expect(w.nextWakeAt()).to.be.a('number');
    });
  });
});
