/**
 * The health of a store as its adapter watches it: whether writes can be made durable now, and if
 * not, why. The SQLite adapter reports a database file deleted or replaced under the running
 * service and failed writes (full disk, I/O errors, a read-only file); the MongoDB adapter a lost
 * connection. The services read it (readiness, the 503 `STORE_UNAVAILABLE` answers); the
 * composition root logs each change once.
 */
import { StoreUnavailableError } from '../domain/errors';

/**
 * Why the store cannot take writes:
 * - `file_deleted`, `file_replaced`: the SQLite file at the configured path is gone or is another
 *   file than the one the service opened; what was written since is not in the file (not recoverable)
 * - `corrupt`: SQLite reports the file malformed or not a database (not recoverable)
 * - `disk_full`, `io_error`, `read_only`, `cannot_open`: a write failed; recoverable when a
 *   write succeeds again (space freed, the volume remounted read-write)
 * - `connection_lost`: the database server does not answer (MongoDB, PostgreSQL); recoverable
 * - `tables_missing`: the store's tables are gone from its PostgreSQL database (the schema or the
 *   database dropped under the service); what was acknowledged is not there (not recoverable)
 * - `permission_denied`: the PostgreSQL role lost a privilege the store needs (a `REVOKE` under
 *   the running service); recoverable when a write succeeds again (the privilege granted back)
 * - `stalled`: the store's calls held by a lock someone else holds. PostgreSQL, while the server
 *   answers: a write transaction running for seconds, or a call that waited for a connection of a
 *   full pool (a lock on the store's tables); ended by the store's watch once neither holds.
 *   SQLite: a write refused with `SQLITE_BUSY` after the busy timeout (another process holds the
 *   file's write lock); ended by the first probe write that commits. Recoverable
 */
export type StoreFaultKind =
  | 'file_deleted'
  | 'file_replaced'
  | 'corrupt'
  | 'disk_full'
  | 'io_error'
  | 'read_only'
  | 'cannot_open'
  | 'connection_lost'
  | 'tables_missing'
  | 'permission_denied'
  | 'stalled';

/** A fault of the store: what, where, and whether it ends by itself. */
export interface StoreFault {
  kind: StoreFaultKind;
  /** The file (SQLite) or the server list (MongoDB, without credentials) the fault is about. */
  target: string;
  /** One line: the error's code and message, or what the watch saw. */
  cause: string;
  /** True: the service resumes by itself once a write succeeds. False: the operator must act (restart). */
  recoverable: boolean;
  /** When it was first seen, epoch ms. */
  since: number;
}

/** Called with the new fault (null: healthy again) and the previous one. */
export type StoreHealthListener = (fault: StoreFault | null, previous: StoreFault | null) => void;

/**
 * The current {@link StoreFault} of one store, or none. A fault that is not recoverable is never
 * replaced by a recoverable one nor cleared (the data written since is not where the store is
 * read from after a restart); a recoverable one is replaced by a fault that is not, and cleared
 * by {@link recovered}. Listeners hear changes only, not repeats of the same kind.
 */
export class StoreHealth {
  private current: StoreFault | null = null;
  private readonly listeners = new Set<StoreHealthListener>();

  /** The fault in force, or null when the store takes writes. */
  get fault(): StoreFault | null {
    return this.current;
  }

  /** Records `fault` unless the one in force already says as much (same kind, or one not recoverable). */
  report(fault: StoreFault): void {
    const prev = this.current;
    if (prev && (!prev.recoverable || (prev.kind === fault.kind && fault.recoverable))) return;
    this.current = fault;
    this.emit(prev);
  }

  /** A write succeeded: a recoverable fault ends. A fault that is not recoverable stays. */
  recovered(): void {
    const prev = this.current;
    if (!prev || !prev.recoverable) return;
    this.current = null;
    this.emit(prev);
  }

  /** Subscribes to changes. @returns the unsubscribe function */
  onChange(listener: StoreHealthListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(prev: StoreFault | null): void {
    for (const l of [...this.listeners]) l(this.current, prev);
  }
}

/** One line for logs and `/readyz`: `disk_full on /data/scheduler.db: SQLITE_FULL database or disk is full`. */
export function describeFault(fault: StoreFault): string {
  return `${fault.kind} on ${fault.target}: ${fault.cause}`;
}

/** The 503 `STORE_UNAVAILABLE` a caller gets while `fault` is in force. */
export function storeUnavailable(fault: StoreFault): StoreUnavailableError {
  return new StoreUnavailableError(fault.kind, fault.target, fault.cause, fault.recoverable);
}

/** What each fault asks of the operator, in its log line. */
function nextStep(fault: StoreFault): string {
  if (fault.kind === 'stalled')
    return 'writes answer 503 STORE_UNAVAILABLE until the transaction holding the lock ends; the service resumes by itself';
  if (fault.recoverable) {
    const what =
      fault.kind === 'disk_full' ? 'space is freed' : fault.kind === 'connection_lost' ? 'the server answers' : 'a write succeeds';
    return `writes answer 503 STORE_UNAVAILABLE until ${what}; the service resumes by itself`;
  }
  const restore = fault.kind === 'tables_missing' ? 'restore the database from a backup' : 'restore the store file';
  return (
    `the service stays unready and refuses writes (503 STORE_UNAVAILABLE) until restarted: stop it, ${restore} ` +
    '(docs/OPERATIONS.md "Store faults"), start it again'
  );
}

/** A fault of the same kind back within this long of its end is a return, not a new fault (ms). */
export const FAULT_RETURN_WINDOW_MS = 10_000;
/** At most one line per this long counts a fault's returns (ms). */
export const FAULT_RETURN_LOG_MS = 60_000;

/**
 * Logs each change of `health` once: a fault as one error line naming the file or server, the
 * cause and the next step; its end as one info line with how long it lasted. A fault that comes
 * back within {@link FAULT_RETURN_WINDOW_MS} of its end (a pool that cannot open connections
 * while the open ones answer: 188 lines in 30 s before) is not logged again: one warning at most
 * every {@link FAULT_RETURN_LOG_MS} counts its returns, and their ends are not logged.
 * @param log pino-like logger
 * @param now the clock's epoch ms (how long a fault lasted)
 * @returns a function that stops logging
 */
export function logStoreHealth(
  health: StoreHealth,
  log: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void; info(obj: object, msg: string): void },
  now: () => number,
): () => void {
  /** Per fault kind: when it last ended, returns not yet counted in a line, when that line was last logged. */
  const kinds = new Map<StoreFaultKind, { endedAt: number; returns: number; countedAt: number; returning: boolean }>();
  return health.onChange((fault, previous) => {
    const at = now();
    if (previous && (!fault || fault.kind !== previous.kind)) {
      const k = kinds.get(previous.kind) ?? { endedAt: at, returns: 0, countedAt: -Infinity, returning: false };
      kinds.set(previous.kind, { ...k, endedAt: at });
      if (!fault && !k.returning)
        log.info(
          { store_fault: previous.kind, target: previous.target, unavailable_ms: Math.max(0, at - previous.since) },
          `store writable again after ${previous.kind} on ${previous.target}; accepting work`,
        );
    }
    if (!fault) return;
    const k = kinds.get(fault.kind);
    if (k && at - k.endedAt < FAULT_RETURN_WINDOW_MS) {
      const returns = k.returns + 1;
      if (at - k.countedAt >= FAULT_RETURN_LOG_MS) {
        log.warn(
          { store_fault: fault.kind, target: fault.target, cause: fault.cause, returns },
          `store fault ${fault.kind} on ${fault.target} keeps coming back (${returns} time(s) within ${FAULT_RETURN_WINDOW_MS / 1000} s of its end); latest cause: ${fault.cause}`,
        );
        kinds.set(fault.kind, { ...k, returns: 0, countedAt: at, returning: true });
      } else kinds.set(fault.kind, { ...k, returns, returning: true });
      return;
    }
    kinds.set(fault.kind, { endedAt: k?.endedAt ?? -Infinity, returns: 0, countedAt: -Infinity, returning: false });
    log.error(
      { store_fault: fault.kind, target: fault.target, cause: fault.cause, recoverable: fault.recoverable },
      `store unavailable: ${describeFault(fault)}; ${nextStep(fault)}`,
    );
  });
}
