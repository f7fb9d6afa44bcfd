import { expect } from 'chai';
import { parseCronSchedule } from '../../../src/domain/cron/cron-schedule';

/** Fire times of `expression` (UTC) from Thursday 2026-01-01 00:00, as weekday names. */
const days = (expression: string, count: number) =>
  parseCronSchedule(expression, 'UTC')
    .nextFireTimes(Date.parse('2026-01-01T00:00:00Z') - 1, count)
    .map((t) => new Date(t).toUTCString().slice(0, 3));

describe('cron: day-of-week ranges ending on SUN', () => {
  it('MON-SUN is every day and FRI-SUN the weekend with Friday, as 1-7 and 5-7 (they were 400 "Invalid range: 1-0")', () => {
    expect(days('0 0 * * MON-SUN', 7)).to.deep.equal(days('0 0 * * 1-7', 7));
    expect(days('0 0 * * MON-SUN', 7)).to.deep.equal(['Thu', 'Fri', 'Sat', 'Sun', 'Mon', 'Tue', 'Wed']);
    expect(days('0 0 * * fri-sun', 4)).to.deep.equal(['Fri', 'Sat', 'Sun', 'Fri']);
    expect(days('0 0 * * SAT-SUN,WED', 4)).to.deep.equal(['Sat', 'Sun', 'Wed', 'Sat']);
    expect(days('0 0 * * SUN-SAT', 2)).to.deep.equal(['Thu', 'Fri']); // SUN at the start stays 0
  });
});
