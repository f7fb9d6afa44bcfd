import { ECHO_MAX } from '../domain/errors';

/**
 * Values that `JSON.stringify` would store as something else, or not at all. A REST body is parsed
 * from JSON text, so it holds none of them except an overflowing number (json-numbers.ts). A
 * caller of the actor-message API in the same process hands its objects over as they are, and the
 * store writes them with `JSON.stringify` (ECMA-262, SerializeJSONProperty), which would turn
 * `Infinity` and `NaN` into `null`, a `Map` or `Set` into `{}`, `undefined` or a function inside an
 * array into `null`, and throw on a `bigint` or a cycle. Such a message is refused instead, naming
 * the field, as REST would refuse the body; what passes is handed on as its JSON round trip
 * (client/scheduler-api-actor.ts), so the service sees exactly what REST would.
 */

/** A value JSON cannot hold as it is, and where: the path from the message's root (`tasks[2].payload.n`; `body` for the root). */
export interface NonJsonValue {
  path: string;
  reason: string;
}

const pathOf = (path: string) => (path === '' ? 'body' : path);

/**
 * `path` with `part` appended, or, once it is {@link ECHO_MAX} characters long, as it is with "…":
 * a body nested 100,000 levels deep otherwise built paths of megabytes, quoted whole in the refusal.
 */
function childPath(path: string, part: string): string {
  if (path.length < ECHO_MAX) return path + part;
  return path.endsWith('…') ? path : `${path}…`;
}

/** Why `v`, met inside an array (`inArray`) or an object, has no JSON form; null when it has one (objects are walked, not judged here). */
function reasonFor(v: unknown, inArray: boolean): string | null {
  switch (typeof v) {
    case 'number':
      return Number.isFinite(v) ? null : `is ${v}, which JSON has no form for (it would be stored as null)`;
    case 'bigint':
      return 'is a bigint, which JSON has no form for: send it as a string or a number';
    case 'function':
    case 'symbol':
      return inArray ? `is a ${typeof v}, which JSON has no form for (it would be stored as null)` : null;
    case 'undefined':
      return inArray ? 'is undefined inside an array (it would be stored as null)' : null;
    default:
      return null;
  }
}

/** True for an object JSON writes as its own fields: a plain object (prototype `Object.prototype` or none). */
function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

/**
 * Most values (every number, string, object, array, … met, an object shared by several fields
 * counted once per field, as JSON writes it once per field) walked before a message is refused
 * as too large: a REST body of 1 MiB holds fewer than 600,000.
 */
export const MAX_JSON_VALUES = 1_000_000;

/** Calls `v.toJSON(key)` as JSON.stringify would; a throw becomes the refusal's reason. */
function writtenForm(v: { toJSON(key: string): unknown }, key: string): { value: unknown } | { reason: string } {
  if (v instanceof Date && Number.isNaN(v.getTime())) return { reason: 'is an invalid Date (JSON would write null)' };
  try {
    return { value: v.toJSON(key) };
  } catch (err) {
    return { reason: `cannot be written as JSON: its toJSON threw "${(err as Error)?.message ?? String(err)}"` };
  }
}

/**
 * The first value in `value` that JSON cannot hold as it is: a number that is not finite, a
 * bigint, a function, symbol or `undefined` inside an array (in an object such a field is left out,
 * as JSON.stringify leaves it out, which is how optional fields are usually written), an object
 * that is neither a plain object nor an array (a `Map`, `Set`, `RegExp`, typed array, class
 * instance), a cycle, or more than {@link MAX_JSON_VALUES} values once written out. An object
 * with its own `toJSON` (a `Date`) is judged by what that returns, as JSON.stringify writes it;
 * an invalid `Date` is refused. Iterative: any depth. Null when the whole value has a JSON form.
 */
export function nonJsonValue(value: unknown): NonJsonValue | null {
  type Item = { v: unknown; path: string; key: string; inArray: boolean } | { leave: object };
  // Each object stays in `open` while its fields are walked: meeting it again there is a cycle.
  const open = new Set<object>();
  const stack: Item[] = [{ v: value, path: '', key: '', inArray: false }];
  let seen = 0;
  while (stack.length > 0) {
    const item = stack.pop() as Item;
    if ('leave' in item) {
      open.delete(item.leave);
      continue;
    }
    if (++seen > MAX_JSON_VALUES) {
      return {
        path: 'body',
        reason: `holds more than ${MAX_JSON_VALUES} values once written as JSON (an object in several fields is written once per field)`,
      };
    }
    const { path, key } = item;
    let v = item.v;
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
      const written = writtenForm(v as { toJSON(key: string): unknown }, key);
      if ('reason' in written) return { path: pathOf(path), reason: written.reason };
      v = written.value;
    }
    const reason = reasonFor(v, item.inArray);
    if (reason !== null) return { path: pathOf(path), reason };
    if (v === null || typeof v !== 'object') continue;
    if (open.has(v)) return { path: pathOf(path), reason: 'refers back to an object that holds it (a cycle), which JSON cannot write' };
    if (Array.isArray(v)) {
      open.add(v);
      stack.push({ leave: v });
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: childPath(path, `[${i}]`), key: String(i), inArray: true });
    } else if (!isPlainObject(v)) {
      const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
      const what = typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a prototype';
      return { path: pathOf(path), reason: `is ${what}, not a plain object: JSON would not keep it as it is` };
    } else {
      open.add(v);
      stack.push({ leave: v });
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, field] = entries[i];
        stack.push({ v: field, path: path === '' ? k : childPath(path, `.${k}`), key: k, inArray: false });
      }
    }
  }
  return null;
}
