/**
 * The embedded store's reads behind its health: every read function of a prepared bundle wrapped
 * so that a failure is looked at as a failed write is (`GuardedWriter.failed`: is the file still
 * the one opened? which SQLite code?). A read that meets a corrupt page (`SQLITE_CORRUPT`), a
 * short read of a damaged log (`SQLITE_IOERR_SHORT_READ`) or a deleted file records that fault, so
 * `/readyz` says so and the caller gets its 503 `STORE_UNAVAILABLE`, never a 500 (a helper
 * truncated the `-wal` under load: 42,813 answers 500 and `/readyz` 200). Reads that succeed are
 * untouched; other errors pass unchanged.
 */

/**
 * A copy of `reads` whose functions, at any depth of plain objects, pass a thrown error (or a
 * rejection) through `failed` and throw what it returns.
 * @param reads a bundle of read functions (plain objects of functions)
 * @param failed maps a read's error to the error its caller gets (records the fault it reveals)
 */
export function guardReads<T extends object>(reads: T, failed: (err: unknown) => unknown): T {
  const guarded: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(reads)) {
    if (typeof value === 'function') guarded[name] = guardOne(value as (...args: unknown[]) => unknown, reads, failed);
    else if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
      guarded[name] = guardReads(value as object, failed);
    else guarded[name] = value;
  }
  return guarded as T;
}

function guardOne(fn: (...args: unknown[]) => unknown, self: object, failed: (err: unknown) => unknown): (...args: unknown[]) => unknown {
  return (...args: unknown[]) => {
    let result: unknown;
    try {
      result = fn.apply(self, args);
    } catch (err) {
      throw failed(err);
    }
    if (result instanceof Promise)
      return result.catch((err: unknown) => {
        throw failed(err);
      });
    return result;
  };
}
