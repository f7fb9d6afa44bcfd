/**
 * PostgreSQL array literals for the store's array parameters (`unnest($1::text[], …)`), written
 * faster than node-postgres writes them. The store binds whole columns as arrays (an insert of
 * 1,000 tasks binds 25 arrays of 1,000 values); pg turns each element into text and runs two
 * regular-expression replaces on it, which was the largest part of binding such a statement on
 * the service's main thread. This writes the same literal (every element quoted, `\` and `"`
 * escaped, `NULL` for null and undefined) and escapes only the elements that need it.
 *
 * Only flat arrays of strings, numbers, booleans and nulls are written here; anything else
 * (nested arrays, Buffers, Dates, objects) is left to pg ({@link arrayLiteral} returns null).
 */

/** An element that needs escaping inside a quoted array element. */
const NEEDS_ESCAPE = /["\\]/;

/** `text` as a quoted array element: `"…"` with `\` and `"` escaped by a backslash. */
function quoted(text: string): string {
  return NEEDS_ESCAPE.test(text) ? `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"` : `"${text}"`;
}

/**
 * The literal of `values` (`{"a","b",NULL}`), as pg would write it for the same array, or null
 * when an element is not a string, number, boolean, null or undefined (pg writes that array).
 * Numbers and booleans are written as their `toString()`, quoted, as pg does.
 */
export function arrayLiteral(values: readonly unknown[]): string | null {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) parts[i] = 'NULL';
    else if (typeof v === 'string') parts[i] = quoted(v);
    else if (typeof v === 'number' || typeof v === 'boolean')
      parts[i] = `"${String(v)}"`; // never holds `"` or `\`
    else return null;
  }
  return `{${parts.join(',')}}`;
}

/** `values` with each array that {@link arrayLiteral} can write replaced by its literal; the rest as given. */
export function withArrayLiterals(values: readonly unknown[] | undefined): unknown[] | undefined {
  if (values === undefined) return undefined;
  let out: unknown[] | null = null;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Array.isArray(v)) continue;
    const literal = arrayLiteral(v);
    if (literal === null) continue;
    out ??= values.slice();
    out[i] = literal;
  }
  return out ?? (values as unknown[]);
}
