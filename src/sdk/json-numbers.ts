/**
 * Numbers JSON cannot hold, and nesting it cannot write. `JSON.stringify` writes NaN and ±Infinity
 * as `null` (ECMA-262, SerializeJSONProperty), and `JSON.parse` reads a literal beyond a double's range (`1e400`) as
 * ±Infinity, so `{"n": 1e400}` or `{n: NaN}` would reach the service, and be stored, as
 * `{"n": null}`. The service refuses such a REST body (400 naming the field); a client cannot
 * send one, since the request's text already says null: the SDK and the CLI refuse it before sending.
 */

/**
 * What keeps a value from being sent as JSON as it is: a non-finite number (and where), an invalid
 * `Date` (which JSON writes as null: `new Date('x')`), or its depth.
 */
export type JsonProblem = { kind: 'number'; path: string; value: number } | { kind: 'date'; path: string } | { kind: 'depth'; max: number };

/**
 * The first thing in `value` JSON cannot carry as it is, in one walk: a non-finite number or an
 * invalid Date, with a path from the root (`.payload.n`, `.tasks[2].payload.n`; `''` for the root itself), or nesting
 * of objects and arrays deeper than `maxDepth` levels (the root object is level 1), which
 * `JSON.stringify` overflows on from a few thousand levels. Null when neither. Plain objects and
 * arrays are walked; objects with `toJSON` (a Date) are not. Iterative (any depth); an object met
 * again (shared, or a cycle, which JSON.stringify refuses itself) is walked once.
 */
export function jsonProblem(value: unknown, maxDepth = Infinity): JsonProblem | null {
  const seen = new Set<object>();
  const stack: Array<[unknown, string, number]> = [[value, '', 0]];
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop() as [unknown, string, number];
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { kind: 'number', path, value: v };
      continue;
    }
    if (v instanceof Date && Number.isNaN(v.getTime())) return { kind: 'date', path };
    if (typeof v !== 'object' || v === null || seen.has(v) || typeof (v as { toJSON?: unknown }).toJSON === 'function') continue;
    if (depth + 1 > maxDepth) return { kind: 'depth', max: maxDepth };
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`, depth + 1]);
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(v as Record<string, unknown>)[keys[i]], `${path}.${keys[i]}`, depth + 1]);
    }
  }
  return null;
}

/** The first non-finite number in `value` and where it is ({@link jsonProblem} without a depth bound); null when none. */
export function nonFiniteNumber(value: unknown): { path: string; value: number } | null {
  const found = jsonProblem(value);
  return found?.kind === 'number' ? { path: found.path, value: found.value } : null;
}
/**
 * The message of a refusal of {@link nonFiniteNumber}'s finding under `root` (`body`, a file name;
 * `''`: the path alone, `the value` for the root itself).
 */
export function nonFiniteNumberMessage(root: string, found: { path: string; value: number }): string {
  const where = `${root}${found.path}`.replace(/^\./, '') || 'the value';
  // Infinity is what JSON text such as 1e400 parses to: say so, the user typed the literal, not Infinity.
  const what = Number.isNaN(found.value) ? 'NaN' : `${found.value} (a literal beyond ±1.8e308, such as 1e400, reads as one)`;
  return `${where}: ${what} is a number JSON cannot hold (it would be sent, and stored, as null)`;
}
