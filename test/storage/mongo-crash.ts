/**
 * A simulated process death for the MongoDB adapter's ops: collections whose calls go through
 * until a chosen call, which (and every call after it) fails with {@link SimulatedCrash} instead
 * of reaching the server. What was written before that call stays, exactly as when the process
 * is killed there; the op's own error handling cannot write anything afterwards either, since
 * every later call fails too.
 */
import type { MongoCollections } from '../../src/storage/mongo/collections';

export class SimulatedCrash extends Error {
  constructor(where: string) {
    super(`simulated crash at ${where}`);
    this.name = 'SimulatedCrash';
  }
}

/**
 * Decides, for each call (collection key, method, arguments), whether the process dies there:
 * false — the call runs; true — it dies before the call; a function — it dies during the call,
 * after the function did part of its work with the real method (e.g. half of an insertMany).
 */
export type CrashPoint = (
  collection: string,
  method: string,
  args: unknown[],
) => boolean | ((real: (...args: unknown[]) => Promise<unknown>) => Promise<unknown>);

/** `c` with calls failing from the {@link CrashPoint} on; `crashed()` tells whether it was reached. */
export function crashing(c: MongoCollections, point: CrashPoint): { c: MongoCollections; crashed: () => boolean } {
  let dead = false;
  const wrap = (name: string, coll: object) =>
    new Proxy(coll, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const where = `${name}.${String(prop)}`;
          if (dead) throw new SimulatedCrash(`${where} (already dead)`);
          const decision = point(name, String(prop), args);
          if (decision === false) return (value as (...a: unknown[]) => unknown).apply(target, args);
          dead = true;
          if (decision === true) throw new SimulatedCrash(where);
          const real = (...a: unknown[]) => (value as (...b: unknown[]) => Promise<unknown>).apply(target, a);
          return decision(real).then(() => {
            throw new SimulatedCrash(where);
          });
        };
      },
    });
  const wrapped = Object.fromEntries(Object.entries(c).map(([k, coll]) => [k, wrap(k, coll as object)]));
  return { c: wrapped as unknown as MongoCollections, crashed: () => dead };
}

/**
 * A {@link CrashPoint} at the `nth` call (1-based) of `collection.method` whose arguments pass
 * `match` (default: any).
 */
export function at(collection: string, method: string, nth = 1, match: (args: unknown[]) => boolean = () => true): CrashPoint {
  let seen = 0;
  return (coll, m, args) => coll === collection && m === method && match(args) && ++seen === nth;
}

/**
 * `c` with `before(collection, method, args)` awaited before every call: another actor (the
 * repair pass, a second node) acting at that exact point of an operation.
 */
export function interleaved(
  c: MongoCollections,
  before: (collection: string, method: string, args: unknown[]) => Promise<void>,
): MongoCollections {
  const wrap = (name: string, coll: object) =>
    new Proxy(coll, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          await before(name, String(prop), args);
          return (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
        };
      },
    });
  return Object.fromEntries(Object.entries(c).map(([k, coll]) => [k, wrap(k, coll as object)])) as unknown as MongoCollections;
}
