/**
 * A cheap look at a value before `JSON.stringify`: is its JSON text sure to be larger than a
 * bound? Some values take minutes of CPU and gigabytes of heap to stringify, only to be refused
 * for their size afterwards: a 100 MB typed array (written as an object with a key per element),
 * or an object graph that shares its levels (each level holding the one below twice, so 30
 * distinct objects write 2^30 leaves). This walk answers from a lower bound of the text's length
 * in UTF-8 bytes, computed once per distinct object (a shared object counts each time it is
 * written, as `JSON.stringify` writes it), and visits at most `maxNodes` distinct objects, 256
 * levels deep.
 *
 * Only what `JSON.stringify` surely writes is counted, so "yes" is never wrong:
 * - a string: its length + 2 (each UTF-16 unit is at least one UTF-8 byte; escapes only add);
 * - a number 1, a boolean 4, null 4; a key of a plain object its length + 3 (`"k":`); a comma
 *   between members and items; `null` (4) for an array item JSON cannot write (a hole, undefined);
 * - a typed array of n elements (`Buffer` included, whose `toJSON` writes an array of them): 2n;
 * - an array or a plain object (prototype `Object.prototype` or null): the sum of its members.
 * Anything else counts 0 and is not entered: class instances, `Map`, `Date`, any value with its
 * own `toJSON` (what it writes is its return value), a getter or Proxy that throws.
 */

/** Most distinct objects visited by {@link jsonBytesAtLeast} (its default `maxNodes`). */
export const JSON_SIZE_WALK_NODES = 10_000;

/** Levels entered; deeper parts count 0 (results and payloads are refused past 64 levels anyway: json-depth.ts). */
const MAX_WALK_DEPTH = 256;

/**
 * A lower bound of the UTF-8 bytes of the JSON text of `value`. The walk stops adding once the
 * bound is past `limitBytes`, so a result above `limitBytes` means "surely larger than the limit";
 * one at or below it means "may fit" (or the walk ran out of nodes, or met something it does not
 * count): then stringify and measure, as without it. Never throws (0 when a getter or a Proxy trap
 * throws before the bound passed the limit).
 */
export function jsonBytesAtLeast(value: unknown, limitBytes: number, maxNodes = JSON_SIZE_WALK_NODES): number {
  const walk = new SizeWalk(limitBytes, maxNodes);
  try {
    return walk.bound(value);
  } catch {
    return walk.largest; // a getter or a Proxy trap threw: only a part already measured counts
  }
}

/** One walk: the bound per distinct object, and the nodes left. */
class SizeWalk {
  private readonly sizes = new Map<object, number>();
  private nodesLeft: number;
  /** The largest bound of a part past the limit (each part is inside the value: a bound of it too). */
  largest = 0;

  constructor(
    private readonly limit: number,
    maxNodes: number,
  ) {
    this.nodesLeft = maxNodes;
  }

  /** A lower bound of the bytes `value` writes (at `depth` levels of objects); stops adding once past the limit. */
  bound(value: unknown, depth = 0): number {
    switch (typeof value) {
      case 'string':
        return value.length + 2;
      case 'number':
        return 1;
      case 'boolean':
        return 4;
      case 'object':
        return value === null ? 4 : this.objectBound(value, depth + 1);
      default:
        return 0; // undefined, functions and symbols are left out; a bigint throws in stringify
    }
  }

  private objectBound(o: object, depth: number): number {
    const known = this.sizes.get(o);
    if (known !== undefined) return known;
    if (this.nodesLeft <= 0 || depth > MAX_WALK_DEPTH) return 0;
    this.nodesLeft--;
    this.sizes.set(o, 0); // a cycle (which stringify refuses) adds nothing
    const size = this.membersBound(o, depth);
    this.sizes.set(o, size);
    if (size > this.limit) this.largest = Math.max(this.largest, size);
    return size;
  }

  private membersBound(o: object, depth: number): number {
    if (ArrayBuffer.isView(o)) {
      const length = (o as { length?: unknown }).length;
      return typeof length === 'number' && typesArray(o) ? 2 * length : 0;
    }
    if (typeof (o as { toJSON?: unknown }).toJSON === 'function') return 0;
    let size = 0;
    if (Array.isArray(o)) {
      // Each item after the first has its comma; a hole, undefined, a function or a symbol is
      // written `null` (so a sparse array of a billion holes is past the limit within its first items).
      for (const item of o as unknown[]) {
        size +=
          (size > 0 ? 1 : 0) + (item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 4 : this.bound(item, depth));
        if (size > this.limit) break;
      }
      return size;
    }
    const proto = Object.getPrototypeOf(o) as unknown;
    if (proto !== Object.prototype && proto !== null) return 0;
    const record = o as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const member = record[key];
      if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue; // left out
      size += (size > 0 ? 1 : 0) + key.length + 3 + this.bound(member, depth);
      if (size > this.limit) break;
    }
    return size;
  }
}

/**
 * A typed array whose JSON writes each element (an object keyed by index, or `Buffer`'s own
 * `toJSON` array); a `DataView`, or a view whose `toJSON` is someone else's, does not count.
 */
function typesArray(view: object): boolean {
  if (view instanceof DataView) return false;
  const toJSON = (view as { toJSON?: unknown }).toJSON;
  return toJSON === undefined || toJSON === Buffer.prototype.toJSON;
}
