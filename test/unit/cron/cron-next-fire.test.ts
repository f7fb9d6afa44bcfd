import { expect } from 'chai';
import * as fs from 'fs';
import * as path from 'path';
import { ValidationError } from '../../../src/domain/errors';
import { CRON_SEARCH_HORIZON_MS, describeCronRules, parseCronSchedule } from '../../../src/domain/cron/cron-schedule';
import { seededRandom } from '../helpers/fixtures';
import { oracleNextFires, oracleOffset } from './brute-force-oracle';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** `2026-03-08T07:30:00Z` style, the format of the shared vectors. */
const iso = (ms: number): string => new Date(ms).toISOString().replace('.000Z', 'Z');
const next = (expression: string, timezone: string, from: string, count: number): string[] =>
  parseCronSchedule(expression, timezone).nextFireTimes(Date.parse(from), count).map(iso);

interface Case {
  cron_expression: string;
  timezone: string;
  now: string;
  expected_next: string[];
  note: string;
}

/**
 * Whether the oracle can walk a case's span quickly: it reads `Intl` once a step, except in UTC.
 */
function oracleCanCheck(c: Case): boolean {
  const span = Date.parse(c.expected_next[c.expected_next.length - 1]!) - Date.parse(c.now);
  return span <= (c.timezone === 'UTC' ? 400 : 40) * DAY;
}

function oracleAgrees(c: Case): void {
  const from = Date.parse(c.now);
  const last = Date.parse(c.expected_next[c.expected_next.length - 1]!);
  // Six-field expressions make the oracle walk seconds: look back only a few hours (longer than
  // any one-hour DST change) instead of a day and a half.
  const sixFields = c.cron_expression.trim().split(/\s+/).length === 6;
  const fires = oracleNextFires(c.cron_expression, c.timezone, from, c.expected_next.length, last - from, sixFields ? 3 * HOUR : undefined);
  expect(fires.map(iso), 'brute-force oracle').to.deep.equal(c.expected_next);
}

// Cases from public bug reports against other schedulers, with the next fire instants computed by
// an independent brute-force oracle; kept in the repository (dist/test/unit/cron → test/fixtures).
const VECTORS_FILE = path.resolve(__dirname, '../../../../test/fixtures/cron-next-fire.json');

describe('cron schedule: next fire times', () => {
  describe('field vectors (test/fixtures/cron-next-fire.json, brute-force oracle of docs/DESIGN.md §7)', () => {
    const cases = JSON.parse(fs.readFileSync(VECTORS_FILE, 'utf8')) as Case[];
    it('the file has cases', () => {
      expect(cases).to.be.an('array').with.length.above(0);
    });
    for (const c of cases) {
      it(`${c.cron_expression} in ${c.timezone} after ${c.now}: ${c.note}`, () => {
        expect(next(c.cron_expression, c.timezone, c.now, c.expected_next.length)).to.deep.equal(c.expected_next);
        // The vectors also vouch for this suite's oracle, which checks the cases below.
        if (oracleCanCheck(c)) oracleAgrees(c);
      });
    }
  });

  /**
   * Worked by hand (offsets and weekdays in the notes) and, where the span is short enough, checked
   * against the brute-force oracle in brute-force-oracle.ts (never against the code under test).
   */
  const OWN_CASES: Case[] = [
    // America/New_York: EST −05:00 → EDT −04:00 on 2026-03-08 at 02:00 (07:00Z); back on 2026-11-01 at 02:00 EDT (06:00Z).
    {
      cron_expression: '15 2 * * 0',
      timezone: 'America/New_York',
      now: '2026-03-01T00:00:00Z',
      expected_next: ['2026-03-01T07:15:00Z', '2026-03-08T07:15:00Z', '2026-03-15T06:15:00Z'],
      note: 'Sundays 02:15: EST, then the gap day read with −05:00 (= 03:15 EDT), then EDT',
    },
    {
      cron_expression: '30 2,3 * * *',
      timezone: 'America/New_York',
      now: '2026-03-07T12:00:00Z',
      expected_next: ['2026-03-08T07:30:00Z', '2026-03-09T06:30:00Z', '2026-03-09T07:30:00Z'],
      note: 'shifted 02:30 and real 03:30 EDT are the same instant: fires once',
    },
    {
      cron_expression: '*/20 2 * * *',
      timezone: 'America/New_York',
      now: '2026-03-08T06:00:00Z',
      expected_next: ['2026-03-08T07:00:00Z', '2026-03-08T07:20:00Z', '2026-03-08T07:40:00Z', '2026-03-09T06:00:00Z'],
      note: 'every wall time of the skipped hour fires, shifted by the gap',
    },
    {
      cron_expression: '*/30 1 * * *',
      timezone: 'America/New_York',
      now: '2026-11-01T04:00:00Z',
      expected_next: [
        '2026-11-01T05:00:00Z',
        '2026-11-01T05:30:00Z',
        '2026-11-01T06:00:00Z',
        '2026-11-01T06:30:00Z',
        '2026-11-02T06:00:00Z',
      ],
      note: 'minute field starts with *: fires in both passes of the repeated 01:00 hour',
    },
    {
      cron_expression: '45 1 * * *',
      timezone: 'America/New_York',
      now: '2026-11-01T05:50:00Z',
      expected_next: ['2026-11-02T06:45:00Z', '2026-11-03T06:45:00Z'],
      note: 'after the first 01:45 (EDT): the repeated 01:45 EST (06:45Z) does not fire',
    },
    {
      cron_expression: '@hourly',
      timezone: 'America/New_York',
      now: '2026-11-01T04:30:00Z',
      expected_next: ['2026-11-01T05:00:00Z', '2026-11-01T06:00:00Z', '2026-11-01T07:00:00Z'],
      note: '@hourly (hour field *) fires at 01:00 EDT, 01:00 EST, 02:00 EST',
    },
    // Europe/London: GMT → BST on 2026-03-29 at 01:00 GMT; back on 2026-10-25 at 02:00 BST (01:00Z).
    {
      cron_expression: '30 1 * * *',
      timezone: 'Europe/London',
      now: '2026-03-28T12:00:00Z',
      expected_next: ['2026-03-29T01:30:00Z', '2026-03-30T00:30:00Z'],
      note: '01:30 does not exist on 29 March: read with +00:00 (= 02:30 BST)',
    },
    {
      cron_expression: '30 1 * * *',
      timezone: 'Europe/London',
      now: '2026-10-24T12:00:00Z',
      expected_next: ['2026-10-25T00:30:00Z', '2026-10-26T01:30:00Z'],
      note: '01:30 happens twice on 25 October: the BST one only',
    },
    {
      cron_expression: '@daily',
      timezone: 'Europe/London',
      now: '2026-03-28T12:00:00Z',
      expected_next: ['2026-03-29T00:00:00Z', '2026-03-29T23:00:00Z', '2026-03-30T23:00:00Z'],
      note: 'midnight GMT, then midnight BST',
    },
    // Australia/Sydney (southern hemisphere): AEDT +11 → AEST +10 on 2026-04-05 at 03:00 (16:00Z on the 4th);
    // AEST → AEDT on 2026-10-04 at 02:00 (16:00Z on the 3rd).
    {
      cron_expression: '30 2 * * *',
      timezone: 'Australia/Sydney',
      now: '2026-10-03T12:00:00Z',
      expected_next: ['2026-10-03T16:30:00Z', '2026-10-04T15:30:00Z'],
      note: 'October gap: 02:30 read with +10:00 (= 03:30 AEDT), then AEDT',
    },
    {
      cron_expression: '30 2 * * *',
      timezone: 'Australia/Sydney',
      now: '2026-04-04T12:00:00Z',
      expected_next: ['2026-04-04T15:30:00Z', '2026-04-05T16:30:00Z'],
      note: 'April overlap: the AEDT 02:30 only, then AEST',
    },
    {
      cron_expression: '*/30 2 * * *',
      timezone: 'Australia/Sydney',
      now: '2026-04-04T15:00:00Z',
      expected_next: ['2026-04-04T15:30:00Z', '2026-04-04T16:00:00Z', '2026-04-04T16:30:00Z', '2026-04-05T16:00:00Z'],
      note: 'April overlap, minute field *: 02:30 AEDT, 02:00 and 02:30 AEST',
    },
    // Australia/Lord_Howe: +10:30 → +11:00 on 2026-10-04 at 02:00 (15:30Z on the 3rd): a 30-minute gap.
    {
      cron_expression: '*/20 * * * *',
      timezone: 'Australia/Lord_Howe',
      now: '2026-10-03T15:00:00Z',
      expected_next: [
        '2026-10-03T15:10:00Z',
        '2026-10-03T15:30:00Z',
        '2026-10-03T15:40:00Z',
        '2026-10-03T15:50:00Z',
        '2026-10-03T16:00:00Z',
      ],
      note: '30-minute gap: 02:00 and 02:20 shifted by 30 minutes interleave with the real 02:40 and 03:00',
    },
    // Pacific/Apia skipped 30 December 2011 (−10:00 → +14:00 at 10:00Z): a gap of a whole day.
    {
      cron_expression: '0 12 * * *',
      timezone: 'Pacific/Apia',
      now: '2011-12-29T12:00:00Z',
      expected_next: ['2011-12-29T22:00:00Z', '2011-12-30T22:00:00Z', '2011-12-31T22:00:00Z'],
      note: 'the missing day fires shifted by 24 h, onto the same instant as 31 December noon: once',
    },
    // Asia/Kolkata: +05:30, no DST.
    {
      cron_expression: '30 23 * * *',
      timezone: 'Asia/Kolkata',
      now: '2026-01-01T00:00:00Z',
      expected_next: ['2026-01-01T18:00:00Z', '2026-01-02T18:00:00Z'],
      note: '23:30 IST is 18:00Z',
    },
    {
      cron_expression: '0 0 1 * *',
      timezone: 'Asia/Kolkata',
      now: '2026-01-01T00:00:00Z',
      expected_next: ['2026-01-31T18:30:00Z', '2026-02-28T18:30:00Z'],
      note: 'the first of the month starts the evening before in UTC',
    },
    // Calendar (UTC).
    {
      cron_expression: '0 0 28-31 * *',
      timezone: 'UTC',
      now: '2027-02-01T00:00:00Z',
      expected_next: [
        '2027-02-28T00:00:00Z',
        '2027-03-28T00:00:00Z',
        '2027-03-29T00:00:00Z',
        '2027-03-30T00:00:00Z',
        '2027-03-31T00:00:00Z',
        '2027-04-28T00:00:00Z',
      ],
      note: 'last days of months, 2027 not leap: Feb 28 only, April has no 31',
    },
    {
      cron_expression: '0 0 28-31 * *',
      timezone: 'UTC',
      now: '2028-02-27T00:00:00Z',
      expected_next: ['2028-02-28T00:00:00Z', '2028-02-29T00:00:00Z', '2028-03-28T00:00:00Z'],
      note: 'last days of months in a leap year',
    },
    {
      cron_expression: '0 12 29 2 *',
      timezone: 'Europe/London',
      now: '2027-03-01T00:00:00Z',
      expected_next: ['2028-02-29T12:00:00Z', '2032-02-29T12:00:00Z'],
      note: 'Feb 29 in a zone (GMT in February)',
    },
    {
      cron_expression: '0 0 29 2 *',
      timezone: 'UTC',
      now: '2097-01-01T00:00:00Z',
      expected_next: ['2104-02-29T00:00:00Z'],
      note: '2100 is not a leap year: seven years to wait, still inside the search horizon',
    },
    {
      cron_expression: '0 0 13 * 5',
      timezone: 'UTC',
      now: '2026-01-01T00:00:00Z',
      expected_next: [
        '2026-01-02T00:00:00Z',
        '2026-01-09T00:00:00Z',
        '2026-01-13T00:00:00Z',
        '2026-01-16T00:00:00Z',
        '2026-01-23T00:00:00Z',
      ],
      note: 'both restricted: Fridays (2, 9, 16, 23 Jan 2026) or the 13th (a Tuesday)',
    },
    {
      cron_expression: '0 0 */3 * 1',
      timezone: 'UTC',
      now: '2024-01-01T00:00:00Z',
      expected_next: [
        '2024-01-22T00:00:00Z',
        '2024-02-19T00:00:00Z',
        '2024-03-04T00:00:00Z',
        '2024-03-25T00:00:00Z',
        '2024-04-01T00:00:00Z',
      ],
      note: '*/3 day-of-month is unrestricted: Mondays that fall on day 1, 4, 7, …, 31 (not every third day OR Monday)',
    },
    {
      cron_expression: '0 0 1 * */2',
      timezone: 'UTC',
      now: '2025-12-31T00:00:00Z',
      expected_next: [
        '2026-01-01T00:00:00Z',
        '2026-02-01T00:00:00Z',
        '2026-03-01T00:00:00Z',
        '2026-08-01T00:00:00Z',
        '2026-09-01T00:00:00Z',
      ],
      note: '*/2 day-of-week (Sun, Tue, Thu, Sat) is unrestricted: firsts of the month on those days',
    },
    {
      cron_expression: '0 0 1-7 * 1',
      timezone: 'UTC',
      now: '2026-06-01T00:00:00Z',
      expected_next: [
        '2026-06-02T00:00:00Z',
        '2026-06-03T00:00:00Z',
        '2026-06-04T00:00:00Z',
        '2026-06-05T00:00:00Z',
        '2026-06-06T00:00:00Z',
        '2026-06-07T00:00:00Z',
        '2026-06-08T00:00:00Z',
        '2026-06-15T00:00:00Z',
      ],
      note: 'a range is restricted: days 1-7 OR Mondays (1 June 2026 is a Monday)',
    },
    // Six fields (seconds first).
    {
      cron_expression: '*/15 30 2 * * *',
      timezone: 'America/New_York',
      now: '2026-03-08T06:00:00Z',
      expected_next: [
        '2026-03-08T07:30:00Z',
        '2026-03-08T07:30:15Z',
        '2026-03-08T07:30:30Z',
        '2026-03-08T07:30:45Z',
        '2026-03-09T06:30:00Z',
      ],
      note: 'seconds inside the spring-forward gap are shifted too',
    },
    {
      cron_expression: '*/20 30 1 * * *',
      timezone: 'America/New_York',
      now: '2026-11-01T05:00:00Z',
      expected_next: ['2026-11-01T05:30:00Z', '2026-11-01T05:30:20Z', '2026-11-01T05:30:40Z', '2026-11-02T06:30:00Z'],
      note: 'a * seconds field does not make the job follow real time: first pass only',
    },
  ];

  describe('hand-computed cases (DST in four hemispheres/offsets, calendar edges, day fields, seconds)', () => {
    for (const c of OWN_CASES) {
      it(`${c.cron_expression} in ${c.timezone} after ${c.now}: ${c.note}`, () => {
        expect(next(c.cron_expression, c.timezone, c.now, c.expected_next.length)).to.deep.equal(c.expected_next);
      });
    }

    it('every hand-computed expectation with a short span agrees with the brute-force oracle', function () {
      this.timeout(20_000);
      let checked = 0;
      for (const c of OWN_CASES) {
        if (!oracleCanCheck(c)) continue;
        oracleAgrees(c);
        checked++;
      }
      expect(checked).to.be.at.least(20);
    });
  });

  describe('aliases', () => {
    const from = '2026-05-15T10:20:00Z'; // a Friday
    const expectations: Array<[string, string]> = [
      ['@yearly', '2027-01-01T00:00:00Z'],
      ['@annually', '2027-01-01T00:00:00Z'],
      ['@monthly', '2026-06-01T00:00:00Z'],
      ['@weekly', '2026-05-17T00:00:00Z'],
      ['@daily', '2026-05-16T00:00:00Z'],
      ['@midnight', '2026-05-16T00:00:00Z'],
      ['@hourly', '2026-05-15T11:00:00Z'],
    ];
    for (const [alias, expected] of expectations) {
      it(`${alias} → ${expected}`, () => {
        expect(next(alias, 'UTC', from, 1)).to.deep.equal([expected]);
      });
    }

    it('aliases are case-insensitive and keep the expression as given', () => {
      const schedule = parseCronSchedule(' @DAILY ', 'Asia/Kolkata');
      expect(schedule.expression).to.equal('@DAILY');
      expect(schedule.nextFireTimes(Date.parse(from), 1).map(iso)).to.deep.equal(['2026-05-15T18:30:00Z']);
    });
  });

  describe('expression syntax', () => {
    it('six fields: seconds first', () => {
      expect(next('10,40 * * * * *', 'UTC', '2026-01-01T00:00:05Z', 4)).to.deep.equal([
        '2026-01-01T00:00:10Z',
        '2026-01-01T00:00:40Z',
        '2026-01-01T00:01:10Z',
        '2026-01-01T00:01:40Z',
      ]);
    });

    it('a list that repeats a value is accepted and means the same as without the repeat', () => {
      const a = parseCronSchedule('0 0 * * 1,1,3', 'UTC').nextFireTimes(Date.UTC(2026, 0, 1), 4);
      expect(a).to.deep.equal(parseCronSchedule('0 0 * * 1,3', 'UTC').nextFireTimes(Date.UTC(2026, 0, 1), 4));
    });

    it('five fields fire at second 0', () => {
      expect(next('* * * * *', 'UTC', '2026-01-01T00:00:05Z', 2)).to.deep.equal(['2026-01-01T00:01:00Z', '2026-01-01T00:02:00Z']);
    });

    it('month and weekday names, 7 as Sunday', () => {
      expect(next('0 9 * jan,JUL sun', 'UTC', '2026-01-01T00:00:00Z', 2)).to.deep.equal(['2026-01-04T09:00:00Z', '2026-01-11T09:00:00Z']);
      expect(next('0 9 * * 7', 'UTC', '2026-01-01T00:00:00Z', 1)).to.deep.equal(['2026-01-04T09:00:00Z']);
    });

    it('L: last day of the month, 5L: last Friday, 1#2: second Monday', () => {
      expect(next('0 0 L * *', 'UTC', '2026-01-15T00:00:00Z', 4)).to.deep.equal([
        '2026-01-31T00:00:00Z',
        '2026-02-28T00:00:00Z',
        '2026-03-31T00:00:00Z',
        '2026-04-30T00:00:00Z',
      ]);
      expect(next('0 0 * * 5L', 'UTC', '2026-01-01T00:00:00Z', 2)).to.deep.equal(['2026-01-30T00:00:00Z', '2026-02-27T00:00:00Z']);
      expect(next('0 0 * * 1#2', 'UTC', '2026-01-01T00:00:00Z', 2)).to.deep.equal(['2026-01-12T00:00:00Z', '2026-02-09T00:00:00Z']);
    });

    it('"strictly after": a fire instant equal to from is not returned, one a millisecond later is', () => {
      const schedule = parseCronSchedule('0 * * * *', 'UTC');
      const at = Date.parse('2026-01-01T05:00:00Z');
      expect(schedule.nextFireTimes(at, 1)).to.deep.equal([at + HOUR]);
      expect(schedule.nextFireTimes(at - 1, 1)).to.deep.equal([at]);
      expect(schedule.nextFireTimes(at - 0.5, 1)).to.deep.equal([at]);
      expect(schedule.nextFireTime(at)).to.equal(at + HOUR);
    });

    it('count 0 gives [] and a bad count or from throws', () => {
      const schedule = parseCronSchedule('* * * * *', 'UTC');
      expect(schedule.nextFireTimes(0, 0)).to.deep.equal([]);
      expect(() => schedule.nextFireTimes(0, -1)).to.throw(RangeError);
      expect(() => schedule.nextFireTimes(0, 1.5)).to.throw(RangeError);
      expect(() => schedule.nextFireTimes(Number.NaN, 1)).to.throw(TypeError);
    });

    it('asking one at a time gives the same instants as asking for many', () => {
      const schedule = parseCronSchedule('*/20 1-3 * * *', 'America/New_York');
      const batch = schedule.nextFireTimes(Date.parse('2026-10-31T12:00:00Z'), 15);
      const oneByOne: number[] = [];
      let from = Date.parse('2026-10-31T12:00:00Z');
      for (let i = 0; i < 15; i++) {
        from = schedule.nextFireTime(from)!;
        oneByOne.push(from);
      }
      expect(oneByOne).to.deep.equal(batch);
      expect(batch.map(iso).slice(0, 6)).to.deep.equal([
        '2026-11-01T05:00:00Z', // 01:00 EDT
        '2026-11-01T05:20:00Z',
        '2026-11-01T05:40:00Z',
        '2026-11-01T06:00:00Z', // 01:00 EST, the repeated hour (minute field starts with *)
        '2026-11-01T06:20:00Z',
        '2026-11-01T06:40:00Z',
      ]);
    });

    it('every second for a thousand seconds is quick and gapless', () => {
      const from = Date.parse('2026-11-01T05:59:00Z');
      const fires = parseCronSchedule('* * * * * *', 'America/New_York').nextFireTimes(from, 1000);
      expect(fires).to.have.length(1000);
      fires.forEach((t, i) => expect(t).to.equal(from + (i + 1) * 1000));
    });
  });

  describe('validation', () => {
    const badExpressions: Array<[unknown, RegExp]> = [
      ['', /empty/],
      ['   ', /empty/],
      ['* * * *', /4 fields/],
      ['* * * * * * *', /7 fields/],
      ['60 * * * *', /not a valid cron expression/],
      ['* 24 * * *', /not a valid cron expression/],
      ['0 0 0 * *', /not a valid cron expression/],
      ['0 0 32 * *', /not a valid cron expression/],
      ['0 0 * 13 *', /not a valid cron expression/],
      ['0 0 * * 8', /not a valid cron expression/],
      ['*/0 * * * *', /not a valid cron expression/],
      ['5-1 * * * *', /not a valid cron expression/],
      ['a b c d e', /not a valid cron expression/],
      ['0 0 * * 1#6', /not a valid cron expression/],
      ['H * * * *', /H \(hash\)/],
      ['@reboot', /unknown alias/],
      ['@fortnightly', /unknown alias/],
      [undefined, /empty/],
      [42, /empty/],
    ];
    for (const [expression, reason] of badExpressions) {
      it(`rejects expression ${JSON.stringify(expression)} with field cron_expression`, () => {
        const call = () => parseCronSchedule(expression as string, 'UTC');
        expect(call).to.throw(ValidationError);
        try {
          call();
        } catch (error) {
          const e = error as ValidationError;
          expect(e.code).to.equal('VALIDATION_FAILED');
          expect(e.details.field).to.equal('cron_expression');
          expect(String(e.details.reason)).to.match(reason);
        }
      });
    }

    for (const timezone of ['Mars/Olympus', '', 'Not a zone', '+05:30', 'EST+5', undefined]) {
      it(`rejects time zone ${JSON.stringify(timezone)} with field timezone`, () => {
        const call = () => parseCronSchedule('0 9 * * *', timezone as string);
        expect(call).to.throw(ValidationError);
        try {
          call();
        } catch (error) {
          expect((error as ValidationError).details.field).to.equal('timezone');
        }
      });
    }

    it('accepts tz database names in any case and legacy links', () => {
      for (const timezone of ['UTC', 'Etc/UTC', 'america/new_york', 'US/Eastern', 'Asia/Calcutta']) {
        expect(() => parseCronSchedule('0 9 * * *', timezone)).not.to.throw();
      }
    });
  });

  describe('expressions that never fire', () => {
    for (const expression of ['0 0 30 2 *', '0 0 31 2,4,6,9,11 *', '0 0 30 2 */1', '0 0 0 31 2 *']) {
      it(`${expression} returns [] quickly, never loops`, () => {
        const started = process.hrtime.bigint();
        expect(parseCronSchedule(expression, 'America/New_York').nextFireTimes(Date.parse('2026-01-01T00:00:00Z'), 3)).to.deep.equal([]);
        expect(Number(process.hrtime.bigint() - started) / 1e6).to.be.lessThan(500);
      });
    }

    it('a rare expression gets every fire time asked for, however far apart (40 years across 2100)', () => {
      const from = Date.parse('2026-01-01T00:00:00Z');
      // The fifth Monday of February: a 29 February that is a Monday.
      const fires = parseCronSchedule('0 0 * 2 1#5', 'UTC').nextFireTimes(from, 4);
      expect(fires.map(iso)).to.deep.equal([
        '2044-02-29T00:00:00Z',
        '2072-02-29T00:00:00Z',
        '2112-02-29T00:00:00Z',
        '2140-02-29T00:00:00Z',
      ]);
      expect(parseCronSchedule('0 0 29 2 *', 'UTC').nextFireTimes(from, 3).map(iso)).to.deep.equal([
        '2028-02-29T00:00:00Z',
        '2032-02-29T00:00:00Z',
        '2036-02-29T00:00:00Z',
      ]);
      // The search gives up one horizon after the start or after the last fire time found.
      expect(CRON_SEARCH_HORIZON_MS).to.be.above(40 * 366 * 24 * 3600 * 1000);
    });
  });

  describe('differential: random expressions near DST transitions vs the brute-force oracle', () => {
    /** Offset changes of a zone in a year, found with the oracle's offsets (daily scan + bisection). */
    function transitions(timeZone: string, year: number): number[] {
      const found: number[] = [];
      let t = Date.UTC(year, 0, 1);
      const end = Date.UTC(year + 1, 0, 1);
      while (t < end) {
        const u = t + DAY;
        if (oracleOffset(timeZone, t) !== oracleOffset(timeZone, u)) {
          let lo = t;
          let hi = u;
          while (hi - lo > MINUTE) {
            const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
            if (oracleOffset(timeZone, mid) === oracleOffset(timeZone, t)) lo = mid;
            else hi = mid;
          }
          found.push(hi);
        }
        t = u;
      }
      return found;
    }

    const ZONES: Array<[string, number]> = [
      ['America/New_York', 2026],
      ['Europe/London', 2026],
      ['Europe/Helsinki', 2026],
      ['Australia/Sydney', 2026],
      ['Australia/Lord_Howe', 2026], // 30-minute DST
      ['America/Santiago', 2026], // transitions at midnight
      ['America/Havana', 2026], // midnight, and 01:00 → 00:00
      ['America/St_Johns', 2026], // −03:30
      ['Pacific/Chatham', 2026], // +12:45 / +13:45
      ['Asia/Tehran', 2021], // midnight transitions (DST ended in 2022)
    ];
    const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const SECONDS = ['0', '*/20', '30', '*/30', '5,45'];
    const MINUTES = ['*', '*/15', '*/20', '0', '30', '0,30', '10-50/20', '45', '59', '5/15', '*/7'];
    const HOURS = ['*', '*/2', '0', '1', '2', '3', '23', '1-3', '0-2', '*/5', '22-23,0-1', '2/3'];
    const DOMS = ['*', '*', '*', '1-7', '*/2', '13', '28-31', '?'];
    const MONTHS = ['*', '*', '*', '3,4,9,10,11', '*/2', 'JAN-JUN'];
    const DOWS = ['*', '*', '*', '0', '1-5', '*/3', '0,6', 'SUN', 'sat', '?'];

    for (const [zone, year] of ZONES) {
      it(`${zone} ${year}: 24 random expressions around each transition agree with the oracle`, function () {
        this.timeout(30_000);
        const rand = seededRandom(zone.length * 7919 + year);
        const changes = transitions(zone, year);
        expect(changes, 'the zone has transitions that year').to.have.length.greaterThan(0);
        for (const change of changes) {
          for (let i = 0; i < 12; i++) {
            const six = rand() < 0.25;
            const expression = [
              ...(six ? [pick(rand, SECONDS)] : []),
              pick(rand, MINUTES),
              pick(rand, HOURS),
              pick(rand, DOMS),
              pick(rand, MONTHS),
              pick(rand, DOWS),
            ].join(' ');
            // "from" at any second within a day and a half before the change (two hours for
            // six-field expressions, whose oracle walks seconds).
            const before = six ? 2 * 3600 : 36 * 3600;
            const from = change - Math.floor(rand() * before) * 1000 - Math.floor(rand() * 1000);
            const window = six ? 3 * HOUR : 2 * DAY;
            const count = 12;
            const expected = oracleNextFires(expression, zone, from, count, window, six ? 3 * HOUR : 1.5 * DAY);
            const actual = parseCronSchedule(expression, zone)
              .nextFireTimes(from, count)
              .filter((t) => t <= from + window);
            expect(actual.map(iso), `${expression} in ${zone} after ${new Date(from).toISOString()}`).to.deep.equal(expected.map(iso));
          }
        }
      });
    }
  });

  it('describeCronRules() states the DST and day-matching rules', () => {
    const text = describeCronRules();
    expect(text).to.match(/offset before the transition/);
    expect(text).to.match(/first occurrence/);
    expect(text).to.match(/either matches/);
    expect(text).to.match(/\*\/3/);
  });
});
