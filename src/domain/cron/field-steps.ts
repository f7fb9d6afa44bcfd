/**
 * Checks cron-parser leaves out: a step must be a whole number no larger than its field's span
 * (cron-parser took `*\/99999999999999999999` in the minute field and fired at minute 0 only), and
 * a value cannot start with a minus sign (cron-parser's message for `-1` was "got range NaN-1").
 * Applied to an expression when it is saved or previewed, never to one already stored: a
 * definition saved before these checks (`0 *\/30 * * *`, daily at 00:00) keeps firing as it did.
 */
import { ValidationError } from '../errors';

/** The six fields (seconds first) with the values each may hold. */
const FIELDS: ReadonlyArray<{ name: string; min: number; max: number }> = [
  { name: 'second', min: 0, max: 59 },
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day-of-week', min: 0, max: 7 },
];

/**
 * The first problem with the steps or signs of the six fields (seconds first), in words naming
 * the field, or null when there is none. `fields` are the expression's fields after alias
 * expansion, as the parser gets them.
 */
export function fieldStepProblem(fields: readonly string[]): string | null {
  for (let i = 0; i < FIELDS.length && i < fields.length; i++) {
    const { name, min, max } = FIELDS[i];
    for (const item of fields[i].split(',')) {
      if (item.startsWith('-')) return `${name} field "${fields[i]}": a value cannot be negative (${min}–${max})`;
      const slash = item.indexOf('/');
      if (slash < 0) continue;
      const step = item.slice(slash + 1);
      const span = max - min + 1;
      if (!/^\d+$/.test(step) || Number(step) < 1 || Number(step) > span) {
        return `${name} field "${fields[i]}": the step "${step}" must be a whole number from 1 to ${span}`;
      }
    }
  }
  return null;
}

/**
 * Refuses, naming `cron_expression`, a new expression whose steps or signs break the rules above.
 * Aliases (`@daily`) have no steps; a wrong field count is left to the parser, which says so.
 * @throws ValidationError
 */
export function assertCronSteps(expression: unknown): void {
  if (typeof expression !== 'string' || expression.trim().startsWith('@')) return;
  const atoms = expression.trim().split(/\s+/);
  if (atoms.length !== 5 && atoms.length !== 6) return;
  const problem = fieldStepProblem(atoms.length === 5 ? ['0', ...atoms] : atoms);
  if (problem !== null) throw new ValidationError('cron_expression', `"${expression.trim()}": ${problem}`);
}
