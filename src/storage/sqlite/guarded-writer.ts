/**
 * The embedded store's writes behind its health: refused at once while a fault is in force, and
 * every failure looked at (is the file still the one opened? which SQLite code?) so a store fault
 * reaches the caller as the 503 `STORE_UNAVAILABLE`, never as an internal error.
 */
import type { Clock } from '../../domain/clock';
import { StoreFault, StoreHealth, storeUnavailable } from '../store-health';
import { FileIdentity, fileChangeOf, movedCause, sqliteFaultOf } from './store-faults';
import { WriteOpName, WriteOps, Writer } from './write-ops';

/** What a {@link GuardedWriter} reports to. */
export interface GuardedWriterDeps {
  /** The database path as configured. */
  file: string;
  /** The file opened at that path (null: `:memory:`). */
  identity: FileIdentity | null;
  health: StoreHealth;
  /** For the faults' `since`. */
  clock: Pick<Clock, 'now'>;
}

/**
 * A {@link Writer} that refuses every write while `health` has a fault (nothing reaches the file;
 * the file watch's probe goes to the inner writer directly) and turns a failure that reveals a
 * fault into that fault, recorded, and its `StoreUnavailableError`. Other errors pass unchanged.
 */
export class GuardedWriter implements Writer {
  constructor(
    private readonly inner: Writer,
    private readonly deps: GuardedWriterDeps,
  ) {}

  /** @throws StoreUnavailableError (503) while a fault is in force, or when this write revealed one */
  async run<K extends WriteOpName>(op: K, args: Parameters<WriteOps[K]>): Promise<ReturnType<WriteOps[K]>> {
    const fault = this.deps.health.fault;
    if (fault) throw storeUnavailable(fault);
    try {
      return await this.inner.run(op, args);
    } catch (err) {
      throw this.failed(err);
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  stats() {
    return this.inner.stats();
  }

  /**
   * A failed store call's error as its caller should see it: after a look at the file (deleted or
   * replaced?) and at the error's SQLite code, a fault is recorded and its 503 returned; any other
   * error is returned as it is.
   */
  failed(err: unknown): unknown {
    const { file, identity, health, clock } = this.deps;
    const now = clock.now();
    const moved = identity ? fileChangeOf(file, identity) : null;
    const fault: StoreFault | null = moved
      ? { kind: moved, target: file, cause: movedCause(moved, file), recoverable: false, since: now }
      : sqliteFaultOf(err, file, now);
    if (!fault) return err;
    health.report(fault);
    return storeUnavailable(health.fault ?? fault);
  }
}
