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
