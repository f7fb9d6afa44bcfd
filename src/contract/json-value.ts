/**
 * Values that `JSON.stringify` would store as something else, or not at all. A REST body is parsed
 * from JSON text, so it holds none of them except an overflowing number (json-numbers.ts). A
 * caller of the actor-message API in the same process hands its objects over as they are, and the
 * store writes them with `JSON.stringify` (ECMA-262, SerializeJSONProperty), which would turn
 * `Infinity` and `NaN` into `null`, a `Map` or `Set` into `{}`, `undefined` or a function inside an
 * array into `null`, and throw on a `bigint` or a cycle. Such a message is refused instead, naming
 * the field, as REST would refuse the body.
 */

/** A value JSON cannot hold as it is, and where: the path from the message's root (`tasks[2].payload.n`; `body` for the root). */
export interface NonJsonValue {
  path: string;
  reason: string;
}

const pathOf = (path: string) => (path === '' ? 'body' : path);

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

/** True for an object JSON writes as its own fields: a plain object or one with its own `toJSON`. */
function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null || typeof (v as { toJSON?: unknown }).toJSON === 'function';
}

/**
 * The first value in `value` that JSON cannot hold as it is: a number that is not finite, a
 * bigint, a function, symbol or `undefined` inside an array (in an object such a field is left out,
 * as JSON.stringify leaves it out, which is how optional fields are usually written), an object
 * that is neither a plain object nor an array (a `Map`, `Set`, `RegExp`, typed array, class
 * instance; one with its own `toJSON`, such as a `Date`, is taken as it writes itself), or a cycle.
 * Iterative: any depth. Null when the whole value has a JSON form.
 */
export function nonJsonValue(value: unknown): NonJsonValue | null {
  type Item = { v: unknown; path: string; inArray: boolean } | { leave: object };
  // Each object stays in `open` while its fields are walked: meeting it again there is a cycle.
  const open = new Set<object>();
  const stack: Item[] = [{ v: value, path: '', inArray: false }];
  while (stack.length > 0) {
    const item = stack.pop() as Item;
    if ('leave' in item) {
      open.delete(item.leave);
      continue;
    }
    const { v, path } = item;
    const reason = reasonFor(v, item.inArray);
    if (reason !== null) return { path: pathOf(path), reason };
    if (v === null || typeof v !== 'object') continue;
    if (open.has(v)) return { path: pathOf(path), reason: 'refers back to an object that holds it (a cycle), which JSON cannot write' };
    if (Array.isArray(v)) {
      open.add(v);
      stack.push({ leave: v });
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: `${path}[${i}]`, inArray: true });
    } else if (!isPlainObject(v)) {
      const name = (v as { constructor?: { name?: unknown } }).constructor?.name;
      const what = typeof name === 'string' && name !== '' ? `a ${name}` : 'an object with a prototype';
      return { path: pathOf(path), reason: `is ${what}, not a plain object: JSON would not keep it as it is` };
    } else if (typeof (v as { toJSON?: unknown }).toJSON !== 'function') {
      open.add(v);
      stack.push({ leave: v });
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) {
        stack.push({ v: entries[i][1], path: path === '' ? entries[i][0] : `${path}.${entries[i][0]}`, inArray: false });
      }
    }
  }
  return null;
}
