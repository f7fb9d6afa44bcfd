import { expect } from 'chai';
import { parseCronSchedule } from '../../../src/domain/cron/cron-schedule';
import { assertCronSteps } from '../../../src/domain/cron/field-steps';

/** Steps and signs of a new cron expression (checked when saved or previewed, not when stored ones are read). */
describe('cron: steps and signs of a new expression', () => {
  it("refuses a step beyond its field's span or not a whole number, and a negative value, naming the field", () => {
    const refused: Array<[string, RegExp]> = [
      // cron-parser took an overlong step and fired at minute 0 only; a sign read "got range NaN-1".
      [
        '*/99999999999999999999 * * * *',
        /minute field "\*\/99999999999999999999": the step "99999999999999999999" must be a whole number from 1 to 60/,
      ],
      ['*/0 * * * *', /the step "0" must be a whole number from 1 to 60/],
      ['0 */25 * * *', /hour field "\*\/25": the step "25" must be a whole number from 1 to 24/],
      ['0 0 */32 * *', /day-of-month field "\*\/32": the step "32" must be a whole number from 1 to 31/],
      ['0 0 1 */13 *', /month field/],
      ['0 0 * * */9', /day-of-week field "\*\/9": the step "9" must be a whole number from 1 to 8/],
      ['*/61 * * * * *', /second field "\*\/61"/],
      ['-1 * * * *', /minute field "-1": a value cannot be negative/],
      ['0 0 * * 1-5/x', /the step "x" must be a whole number/],
    ];
    for (const [expression, message] of refused) {
      expect(() => assertCronSteps(expression), expression)
        .to.throw(message)
        .with.property('details')
        .that.deep.include({ field: 'cron_expression' });
    }
  });

  it('takes steps within the span, ranges with steps, aliases, and leaves other mistakes to the parser', () => {
    for (const expression of [
      '*/60 * * * *',
      '0-30/45 * * * *',
      '0 9 * * 1-5/2',
      '0 0 * * */8',
      '*/15 * * * * *',
      '@daily',
      '0 0 L * *',
      '0 0 * * 5#3',
      '* * *',
    ]) {
      expect(() => assertCronSteps(expression), expression).not.to.throw();
    }
  });

  it('an expression stored before the check still parses, and fires as it did', () => {
    // `0 */30 * * *`: hours 0 only (cron-parser's reading), daily at 00:00 UTC.
    const fires = parseCronSchedule('0 */30 * * *', 'UTC').nextFireTimes(Date.parse('2026-01-01T12:00:00Z'), 2);
    expect(fires.map((t) => new Date(t).toISOString())).to.deep.equal(['2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z']);
  });
});
