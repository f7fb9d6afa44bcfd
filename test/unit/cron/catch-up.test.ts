import { expect } from 'chai';
import { planFirings } from '../../../src/domain/cron/catch-up';
import { parseCronSchedule } from '../../../src/domain/cron/cron-schedule';

const T0 = Date.UTC(2026, 2, 1, 12, 0, 0); // a whole minute
const MIN = 60_000;
const everyMinute = parseCronSchedule('* * * * *', 'UTC');
const everySecond = parseCronSchedule('* * * * * *', 'UTC');
const base = { misfireGraceMs: 5000, maxCatchUp: 100 };

describe('cron catch-up planning (DESIGN §7 missed firings)', () => {
  it('nothing is planned before the due time', () => {
    const plan = planFirings(everyMinute, { ...base, due: T0, now: T0 - 1, catchUp: 'latest' });
    expect(plan).to.deep.equal({ firings: [], nextFireTime: T0, uncounted: 0 });
  });

  it('an on-time firing fires as created in every mode, next is the following minute', () => {
    for (const catchUp of ['none', 'latest', 'all'] as const) {
      const plan = planFirings(everyMinute, { ...base, due: T0, now: T0 + 3, catchUp });
      expect(plan.firings).to.deep.equal([{ fireTime: T0, outcome: 'created', reason: null }]);
      expect(plan.nextFireTime).to.equal(T0 + MIN);
    }
  });

  it('a firing reached within the grace is on time; one millisecond later it is missed', () => {
    expect(planFirings(everyMinute, { ...base, due: T0, now: T0 + 5000, catchUp: 'none' }).firings[0].outcome).to.equal('created');
    expect(planFirings(everyMinute, { ...base, due: T0, now: T0 + 5001, catchUp: 'none' }).firings[0]).to.deep.equal({
      fireTime: T0,
      outcome: 'skipped',
      reason: 'misfire',
    });
  });

  describe('after 10 minutes of downtime (missed T0 … T0+9m, now T0+10m+30s)', () => {
    const now = T0 + 10 * MIN + 30_000;
    const missed = Array.from({ length: 11 }, (_, i) => T0 + i * MIN);

    it('none: every missed firing is recorded as skipped (misfire), none fires; next is the next future time', () => {
      const plan = planFirings(everyMinute, { ...base, due: T0, now, catchUp: 'none' });
      expect(plan.firings.map((f) => f.fireTime)).to.deep.equal(missed);
      expect(plan.firings.every((f) => f.outcome === 'skipped' && f.reason === 'misfire')).to.equal(true);
      expect(plan.nextFireTime).to.equal(T0 + 11 * MIN);
    });

    it('latest: only the most recent missed firing fires (caught_up); the others are skipped', () => {
      const plan = planFirings(everyMinute, { ...base, due: T0, now, catchUp: 'latest' });
      expect(plan.firings.filter((f) => f.outcome === 'caught_up').map((f) => f.fireTime)).to.deep.equal([T0 + 10 * MIN]);
      expect(plan.firings.filter((f) => f.outcome === 'skipped')).to.have.length(10);
    });

    it('all: every missed firing fires, in order', () => {
      const plan = planFirings(everyMinute, { ...base, due: T0, now, catchUp: 'all' });
      expect(plan.firings).to.deep.equal(missed.map((fireTime) => ({ fireTime, outcome: 'caught_up', reason: null })));
    });

    it('all with max_catch_up 3: the three most recent fire, oldest first; the rest are uncounted', () => {
      const plan = planFirings(everyMinute, { ...base, maxCatchUp: 3, due: T0, now, catchUp: 'all' });
      expect(plan.firings.map((f) => f.fireTime)).to.deep.equal(missed.slice(-3));
      // A lower bound: the search stops as soon as it has what it keeps.
      expect(plan.uncounted).to.be.within(1, 8);
    });
  });

  it('latest with an on-time firing after missed ones: the on-time one fires, missed ones are skipped', () => {
    const now = T0 + 3 * MIN + 2000; // T0+3m is on time, T0..T0+2m missed
    const plan = planFirings(everyMinute, { ...base, due: T0, now, catchUp: 'latest' });
    expect(plan.firings.map((f) => [f.fireTime - T0, f.outcome])).to.deep.equal([
      [0, 'skipped'],
      [MIN, 'skipped'],
      [2 * MIN, 'skipped'],
      [3 * MIN, 'created'],
    ]);
  });

  it('a busy evaluator (2.5 s late on an every-second cron) fires every second as created', () => {
    const plan = planFirings(everySecond, { ...base, due: T0, now: T0 + 2500, catchUp: 'none' });
    expect(plan.firings.map((f) => f.outcome)).to.deep.equal(['created', 'created', 'created']);
    expect(plan.nextFireTime).to.equal(T0 + 3000);
  });

  it('a year of downtime of an every-second cron is planned quickly with bounded records', () => {
    const now = T0 + 365 * 24 * 3600 * 1000;
    const started = process.hrtime.bigint();
    const plan = planFirings(everySecond, { ...base, maxCatchUp: 5, due: T0, now, catchUp: 'all' });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    expect(plan.firings.filter((f) => f.outcome === 'caught_up')).to.have.length(5);
    expect(plan.firings).to.have.length(5 + 6); // + the on-time seconds in the 5 s grace
    expect(plan.uncounted).to.be.greaterThan(0);
    expect(plan.nextFireTime).to.equal(now + 1000);
    // Not a speed assertion: a guard against enumerating 31 million seconds (which takes minutes).
    expect(ms).to.be.lessThan(5000);
  });

  it('an expression that never fires again plans its last firing and a null next time', () => {
    const once = parseCronSchedule('0 0 12 1 3 *', 'UTC'); // 1 March, 12:00 — yearly
    const plan = planFirings(once, { ...base, due: T0, now: T0 + 10, catchUp: 'latest' });
    expect(plan.firings).to.have.length(1);
    expect(plan.nextFireTime).to.equal(Date.UTC(2027, 2, 1, 12, 0, 0));
  });

  it('rejects max_catch_up below 1', () => {
    expect(() => planFirings(everyMinute, { ...base, maxCatchUp: 0, due: T0, now: T0, catchUp: 'all' })).to.throw(RangeError);
  });
});
