/**
 * The watch over a running embedded store's file, on the injected clock: every `intervalMs`
 * (at most 1 s) it compares the file at the store's path, and its write-ahead log, with the ones
 * the service opened (device and inode) and looks at the free space of its volume; while a
 * recoverable fault is in force it tries a real write (the probe) and ends the fault when one
 * commits.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Clock, TimerHandle } from '../../domain/clock';
import type { StoreHealth } from '../store-health';
import { FileIdentity, fileChangeOf, identityOf, movedCause, sqliteFaultOf, walFileOf } from './store-faults';

/** Longest interval between two looks at the file (ms). */
export const FILE_WATCH_MAX_INTERVAL_MS = 1000;

/** What a {@link FileWatch} watches and reports to. */
export interface FileWatchDeps {
  /** The database path as configured. */
  file: string;
  /** The file the service opened at that path. */
  opened: FileIdentity;
  /** Its write-ahead log as the service opened it ({@link walFileOf}); null or absent: not watched. */
  wal?: FileIdentity | null;
  clock: Clock;
  health: StoreHealth;
  /** A write through the group commit; resolves once it committed (SqliteStore's `probeWrite`). */
  probe: () => Promise<void>;
  /** Interval between looks (ms, default and at most {@link FILE_WATCH_MAX_INTERVAL_MS}). */
  intervalMs?: number;
  /** How the path is looked at (default: `fs.statSync`). */
  stat?: (file: string) => FileIdentity | null;
  /** Bytes an unprivileged writer may still use on the volume of `dir`; null when unknown (default: `fs.statfsSync`). */
  freeBytes?: (dir: string) => number | null;
  /**
   * Gives back the space the store's own write-ahead log holds beyond its commits (SqliteStore's
   * TRUNCATE checkpoint); tried once per look while the volume has no space left. Errors are ignored.
   */
  reclaim?: () => Promise<unknown>;
}

/**
 * Watches one store file. A file deleted or replaced is a fault that is not recoverable (what the
 * service wrote since is in no file it will read after a restart); a volume with no space left is
 * `disk_full` before any write fails, and ends once space is back and a probe write commits. Any
 * other recoverable fault (reported by a failed write) ends when a probe write commits.
 * On a full volume each look first asks the store to give back its WAL's spare space (`reclaim`):
 * a write refused for lack of space leaves its frames in the WAL file, which only a later write
 * would start over, so a large refused write on a small volume would otherwise keep it full.
 */
export class FileWatch {
  private timer: TimerHandle | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;
  private readonly intervalMs: number;

  constructor(private readonly deps: FileWatchDeps) {
    this.intervalMs = Math.min(FILE_WATCH_MAX_INTERVAL_MS, Math.max(1, deps.intervalMs ?? FILE_WATCH_MAX_INTERVAL_MS));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule();
  }

  /** Cancels the next look and waits for one in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.deps.clock.clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One look: the file, the free space, and a probe write while a recoverable fault is in force. Never throws. */
  async check(): Promise<void> {
    const { file, opened, clock, health } = this.deps;
    const now = clock.now();
    const stat = this.deps.stat ?? identityOf;
    const moved = fileChangeOf(file, opened, stat);
    if (moved) {
      health.report({ kind: moved, target: file, cause: movedCause(moved, file), recoverable: false, since: now });
      return;
    }
    const wal = this.deps.wal;
    const walMoved = wal ? fileChangeOf(walFileOf(file), wal, stat) : null;
    if (walMoved) {
      const cause = movedCause(walMoved, walFileOf(file), 'write-ahead log');
      health.report({ kind: walMoved, target: file, cause, recoverable: false, since: now });
      return;
    }
    const dir = path.dirname(path.resolve(file));
    const freeBytes = this.deps.freeBytes ?? freeBytesOf;
    let free = freeBytes(dir);
    if (free === 0 && this.deps.reclaim) {
      await this.deps.reclaim().catch(() => undefined);
      free = freeBytes(dir);
    }
    if (free === 0) {
      health.report({
        kind: 'disk_full',
        target: file,
        cause: `no space left on the volume of ${dir} (0 bytes available)`,
        recoverable: true,
        since: now,
      });
      return;
    }
    const fault = health.fault;
    if (!fault || !fault.recoverable) return;
    try {
      await this.deps.probe();
      health.recovered();
    } catch (err) {
      const seen = sqliteFaultOf(err, file, clock.now());
      if (seen) health.report(seen);
    }
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.deps.clock.setTimeout(() => {
      this.timer = null;
      this.running = this.check().finally(() => {
        this.running = null;
        this.schedule();
      });
    }, this.intervalMs);
    // The watch alone never keeps the process alive (Node's timers; a manual clock's handles have no unref).
    (this.timer as { unref?: () => void }).unref?.();
  }
}

/** Bytes available to unprivileged writers on the volume of `dir` (`statfs`: `bavail × bsize`); null when it cannot be read. */
export function freeBytesOf(dir: string): number | null {
  try {
    const s = fs.statfsSync(dir);
    return s.bavail * s.bsize;
  } catch {
    return null;
  }
}
