import fs from 'node:fs';
import type { Logger } from 'pino';

/** How often the service compares its open file descriptors with its limit (ms). */
export const OPEN_FILES_CHECK_MS = 5_000;
/** Share of the limit at which the watch warns (every connection, file and pipe holds one). */
export const OPEN_FILES_WARN_SHARE = 0.9;
/** Share of the limit under which a warned state is logged as over. */
export const OPEN_FILES_CLEAR_SHARE = 0.75;

/** Open file descriptors of a process and its soft limit (`ulimit -n`, `LimitNOFILE=`). */
export interface OpenFiles {
  open: number;
  limit: number;
}

/**
 * Reads this process's open descriptors (`/proc/self/fd`) and soft open-files limit
 * (`/proc/self/limits`, "Max open files"). Answers null without `/proc` (not Linux) or with no
 * finite limit. At the limit these reads need a descriptor themselves and are refused (EMFILE,
 * ENFILE): the limit is then `knownLimit` (an earlier reading), and `open` is the limit.
 * @param procDir the process's `/proc` directory (tests pass a fake one)
 * @param knownLimit the limit read before, used when the limits file cannot be read now
 */
export function readOpenFiles(procDir = '/proc/self', knownLimit?: number): OpenFiles | null {
  let limit = knownLimit;
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(fs.readFileSync(`${procDir}/limits`, 'utf8'));
    limit = line && line[1] !== 'unlimited' ? Number(line[1]) : undefined;
  } catch {
    /* at the limit, or no /proc: keep the known limit, if any */
  }
  if (limit === undefined || !(limit > 0)) return null;
  try {
    return { open: fs.readdirSync(`${procDir}/fd`).length, limit };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'EMFILE' || code === 'ENFILE' ? { open: limit, limit } : null;
  }
}

/** Descriptors a service needs to start with no worker process (SQLite store, HTTP, threads), with room to spare; measured 43 on 2026-12-07. */
export const OPEN_FILES_START_BASE = 64;
/** Descriptors each worker process costs its service (IPC channel, pipes, liveness socket; measured 2), with room for a respawn. */
export const OPEN_FILES_PER_WORKER = 8;
/** Descriptors a network store adds (its connection pools: PostgreSQL 10 + 2 + one listener). */
export const OPEN_FILES_NETWORK_STORE = 32;

/**
 * Why the service cannot start under this open-files limit, in one line naming the limit, the
 * floor and the fix; null when it can (or the limit is unknown). The floor
 * ({@link OPEN_FILES_START_BASE} + {@link OPEN_FILES_PER_WORKER} per worker process, +
 * {@link OPEN_FILES_NETWORK_STORE} for PostgreSQL or MongoDB) is what start-up itself opens with
 * some room, not a sizing: under it, start-up failed at whichever open came first (a module, the
 * store, a thread, a fork), each in its own words. Node raises its soft limit to the hard one at
 * start, so this is the hard limit (`prlimit`, `docker run --ulimit`, `LimitNOFILE=`).
 * @param files the reading ({@link readOpenFiles}); null: not known, no refusal
 * @param workerProcesses worker processes of every pool
 * @param networkStore the store is PostgreSQL or MongoDB (its connection pools hold descriptors)
 */
export function openFilesRefusal(files: OpenFiles | null, workerProcesses: number, networkStore: boolean): string | null {
  if (!files) return null;
  const floor = OPEN_FILES_START_BASE + OPEN_FILES_PER_WORKER * workerProcesses + (networkStore ? OPEN_FILES_NETWORK_STORE : 0);
  if (files.limit >= floor) return null;
  return (
    `open files limit ${files.limit} is below the ${floor} this service needs to start with ${workerProcesses} worker process(es)` +
    ' (every connection, file, thread pipe and worker channel holds one): raise it (ulimit -n, LimitNOFILE=, docker --ulimit nofile=) to thousands'
  );
}

/**
 * Warns when the service nears its open-files limit. At the limit, the kernel refuses new
 * descriptors: Node's HTTP server then accepts and closes each new connection at once (libuv's
 * reserve-descriptor answer to EMFILE), so clients see resets and nothing else says why; a worker
 * process cannot be respawned either (docs/FAILURES.md). One warning when the open descriptors
 * reach {@link OPEN_FILES_WARN_SHARE} of the limit, one info line once they fall under
 * {@link OPEN_FILES_CLEAR_SHARE}; the figures are also in `/metrics` (`scheduler_process_open_fds`,
 * `scheduler_process_max_fds`, from prom-client).
 */
export class OpenFilesWatch {
  private warned = false;
  private limit: number | undefined;

  /**
   * @param read the reading, given the last limit read ({@link readOpenFiles} by default)
   */
  constructor(
    private readonly log: Pick<Logger, 'warn' | 'info'>,
    private readonly read: (knownLimit?: number) => OpenFiles | null = (knownLimit) => readOpenFiles('/proc/self', knownLimit),
  ) {}

  /** One look at the figures; logs a change of state. Never throws. */
  check(): void {
    const now = this.read(this.limit);
    if (!now) return;
    this.limit = now.limit;
    const share = now.open / now.limit;
    if (!this.warned && share >= OPEN_FILES_WARN_SHARE) {
      this.warned = true;
      this.log.warn(
        { open_files: now.open, open_files_limit: now.limit },
        'open files near their limit: new connections are reset and workers cannot be respawned at the limit; raise it (ulimit -n, LimitNOFILE=) or find what holds them',
      );
    } else if (this.warned && share < OPEN_FILES_CLEAR_SHARE) {
      this.warned = false;
      this.log.info({ open_files: now.open, open_files_limit: now.limit }, 'open files back under their limit');
    }
  }
}
