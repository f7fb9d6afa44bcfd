/**
 * Numbers JSON cannot hold, and nesting it cannot write. `JSON.stringify` writes NaN and ±Infinity as `null` (ECMA-262,
 * SerializeJSONProperty), and `JSON.parse` reads a literal beyond a double's range (`1e400`) as
 * ±Infinity, so `{"n": 1e400}` or `{n: NaN}` would reach the service, and be stored, as
 * `{"n": null}`. The service refuses such a REST body (400 naming the field); a client cannot
 * send one, since the request's text already says null: the SDK and the CLI refuse it before sending.
 */

/**
 * The first non-finite number in `value` and where it is: a path from the root (`.payload.n`,
 * `.tasks[2].payload.n`; `''` for the root itself); null when every number is finite. Plain
 * objects and arrays are walked; objects with `toJSON` (a Date) are not. Iterative (any depth); an
 * object met again (shared, or a cycle, which JSON.stringify refuses itself) is walked once.
 */
export function nonFiniteNumber(value: unknown): { path: string; value: number } | null {
  const seen = new Set<object>();
  const stack: Array<[unknown, string]> = [[value, '']];
  while (stack.length > 0) {
    const [v, path] = stack.pop() as [unknown, string];
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) return { path, value: v };
      continue;
    }
    if (typeof v !== 'object' || v === null || seen.has(v) || typeof (v as { toJSON?: unknown }).toJSON === 'function') continue;
    seen.add(v);
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
    } else {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) stack.push([(v as Record<string, unknown>)[keys[i]], `${path}.${keys[i]}`]);
    }
  }
  return null;
}

/**
 * The message of a refusal of {@link nonFiniteNumber}'s finding under `root` (`body`, a file name;
 * `''`: the path alone, `the value` for the root itself).
 */
export function nonFiniteNumberMessage(root: string, found: { path: string; value: number }): string {
  const where = `${root}${found.path}`.replace(/^\./, '') || 'the value';
  return `${where}: ${found.value} is a number JSON cannot hold (it would be sent, and stored, as null)`;
}

/**
 * True when `value` nests objects and arrays deeper than `max` levels (the root object is level 1).
 * Iterative, so a value of any depth is measured without using the stack, which `JSON.stringify`
 * would overflow from a few thousand levels. Objects with `toJSON` are not walked.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null || seen.has(v) || typeof (v as { toJSON?: unknown }).toJSON === 'function') continue;
    if (depth + 1 > max) return true;
    seen.add(v);
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}
