import { nonJsonValue } from './json-value';

/**
 * A JSON number literal beyond the range of a double (about ±1.8e308, `Number.MAX_VALUE`) parses
 * to ±Infinity, and `JSON.stringify` writes a non-finite number as `null` (ECMA-262,
 * SerializeJSONProperty). Stored, `{"n": 1e400}` would silently become `{"n": null}`, so such a
 * body is refused instead. (A literal too small for a double rounds to 0, as IEEE 754 rounding
 * does for any decimal; that is not refused.)
 */

/**
 * Text that may hold an overflowing literal: an exponent of three digits or more, or 309 digits in
 * a row. The lookbehind starts the digit count only at the first digit of a run: without it the
 * engine retries at every digit, and a 1 MiB body of 308-digit runs took about 0.6 s to scan
 * (15 ms with it), a way to stall the event loop.
 */
const MAY_OVERFLOW = /[eE]\+?\d{3}|(?<!\d)\d{309}/;

/**
 * The path of the first number in `value` that is not finite, from the body's root
 * (`tasks[3].payload.n`; `body` for the root itself), or null when every number is finite.
 * `text` is the JSON `value` was parsed from: the value is walked (by {@link nonJsonValue}, which
 * in parsed JSON can only find such a number) only when the text has a literal that could
 * overflow, so ordinary bodies cost one regular-expression scan. Iterative: any depth.
 */
export function nonFiniteNumberPath(text: string, value: unknown): string | null {
  if (!MAY_OVERFLOW.test(text)) return null;
  return nonJsonValue(value)?.path ?? null;
}
