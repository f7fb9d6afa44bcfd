import { expect } from 'chai';
import { parseCronFields } from '../../../src/domain/cron/cron-fields';
import { parseCronSchedule } from '../../../src/domain/cron/cron-schedule';
import { assertCronCanFire, dayFieldsCanMatch } from '../../../src/domain/cron/never-fires';
import { CronNeverFiresError } from '../../../src/domain/errors';
import { httpStatusOf } from '../../../src/contract/error-catalog';
import { oracleEverFires } from './brute-force-oracle';

const canFire = (expression: string) => dayFieldsCanMatch(parseCronFields(expression));

describe('cron: expressions that can never fire', () => {
  it('no listed month has the day, and a day-of-week starting with * does not rescue it', () => {
    for (const e of [
      '0 0 30 2 *',
      '0 0 31 4 *',
      '0 0 31 2,4,6,9,11 *',
      '0 0 30 FEB ?',
      '0 0 30 2 */1',
      '0 0 0 30 2 *',
      '0 0 30,31 2 */3',
    ]) {
      expect(canFire(e), e).to.equal(false);
    }
  });

  it('these do fire: a leap day, the 31st of the months that have one, and the OR of two restricted day fields', () => {
    for (const e of ['0 0 29 2 *', '0 0 31 * *', '0 0 30 2 MON', '0 0 31 4 1-5', '0 0 30,31 2,3 *', '0 0 L 2 *', '@yearly', '* * * * *']) {
      expect(canFire(e), e).to.equal(true);
    }
    // The OR rule: 30 February never comes, but February's Mondays do.
    expect(parseCronSchedule('0 0 30 2 MON', 'UTC').nextFireTime(Date.parse('2026-06-01T00:00:00Z'))).to.equal(
      Date.parse('2027-02-01T00:00:00Z'),
    );
  });

  it('L, the last weekday and the n-th weekday with a stepped day-of-month (AND): exact, per month length', () => {
    // */10 is days 1, 11, 21, 31: a fifth Monday falls on day 29–31, so only the 31st can be one.
    expect(canFire('0 0 */10 2 1#5')).to.equal(false);
    expect(canFire('0 0 */10 3 1#5')).to.equal(true);
    // */15 is days 1, 16, 31: the last Friday of February falls on day 22–29.
    expect(canFire('0 0 */15 2 5L')).to.equal(false);
    expect(canFire('0 0 */15 3 5L')).to.equal(true);
    // */7 is days 1, 8, 15, 22, 29: a fifth Sunday of February needs a leap year starting on Sunday.
    expect(canFire('0 0 */7 2 0#5')).to.equal(true);
  });

  it('agrees with a brute-force walk over a whole 400-year cycle for every combination of these day fields', () => {
    const doms = ['*', '?', '*/2', '*/10', '*/15', '1', '15', '29', '30', '31', '30,31', '29-31', '28-31/3'];
    const months = ['*', '2', 'FEB', '4', '2,4', '4,6,9,11', '2,4,6,9,11', '*/2', '1-3', '9-11/2'];
    const dows = ['*', '?', '*/3', '0', 'MON', '1-5', '7', 'SAT,SUN'];
    let never = 0;
    for (const dom of doms) {
      for (const month of months) {
        for (const dow of dows) {
          const e = `0 0 ${dom} ${month} ${dow}`;
          const expected = oracleEverFires(e);
          expect(canFire(e), e).to.equal(expected);
          if (!expected) never++;
        }
      }
    }
    expect(never, 'the grid holds never-firing expressions').to.be.greaterThan(20);
  });

  it('assertCronCanFire: CRON_NEVER_FIRES naming cron_expression and quoting the day fields', () => {
    try {
      assertCronCanFire(' 0 0 31 4 * ');
      expect.fail('refused');
    } catch (err) {
      expect(err).to.be.instanceOf(CronNeverFiresError);
      const e = err as CronNeverFiresError;
      expect({ code: e.code, status: httpStatusOf(e.code) }).to.include({ code: 'CRON_NEVER_FIRES', status: 400 });
      expect(e.details).to.deep.equal({ field: 'cron_expression', cron_expression: '0 0 31 4 *' });
      expect(e.message).to.include('"0 0 31 4 *" can never fire').and.include('day-of-month "31", month "4"');
    }
    expect(() => assertCronCanFire('0 0 29 2 *')).to.not.throw();
  });
});
