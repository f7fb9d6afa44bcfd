import { ValidationError } from '../domain/errors';

/** Longest `?wait=` (seconds): a long poll answers at the latest after this. */
export const WAIT_MAX_SECONDS = 60;

/**
 * The `wait` query parameter of `GET /api/v1/tasks/{id}` and `GET /api/v1/workflows/{id}`: seconds
 * as a decimal number (`5`, `0.25`), more than 0 and at most {@link WAIT_MAX_SECONDS}. The form and
 * the range are checked by {@link waitMsOf}, so that every refusal (`abc` as `61`) says the same
 * readable thing, not a regular expression.
 */
export const waitQueryProperty = {
  type: 'string',
  description: `Long poll: answer as soon as the resource is terminal, or after this many seconds (0 < wait ≤ ${WAIT_MAX_SECONDS}) with its current state`,
} as const;

/**
 * `?wait=SECONDS` → milliseconds (rounded up to a whole ms); undefined when absent.
 * @throws ValidationError (`wait`) for anything but a decimal number in (0, 60]
 */
export function waitMsOf(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const seconds = /^[0-9]{1,6}(\.[0-9]{1,6})?$/.test(raw) ? Number(raw) : NaN;
  if (!(seconds > 0 && seconds <= WAIT_MAX_SECONDS)) {
    throw new ValidationError('wait', `must be a number of seconds, more than 0 and at most ${WAIT_MAX_SECONDS}`);
  }
  return Math.ceil(seconds * 1000);
}
