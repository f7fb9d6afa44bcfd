/**
 * Starts a thread whose V8 young generation is at the process's bound from its first
 * allocation, instead of growing to it later.
 *
 * Why (load-tests/README.md, soak runs 6 and 7): V8 takes `--max-semi-space-size` for every
 * isolate of the process, not only the main thread's. The service runs with 64 (package.json),
 * and the writer thread's young generation, started at `--min-semi-space-size` (16), doubled as
 * V8 saw its objects survive scavenges: to 64 MiB in its first seconds, then to 128 MiB at a
 * tenant flood 39 minutes into an hour, a 46 MB step of the service's RSS that stayed. Bounding
 * it lower made the herd slower (p99 of a 2,000-task herd 9 → 13.5 ms, 10 rounds). Starting it
 * at its bound takes the same memory from the start: the service's RSS reaches its working size
 * in the first minutes, and the writer is spared the scavenges of its growth.
 *
 * How: V8 reads its heap flags when an isolate is made. The minimum is raised to the maximum
 * with `v8.setFlagsFromString` (Node: "behavior is undefined if flags are changed after the VM
 * has started"; tried on Node 20.20.2, 22.23.3 and 24.18.1: a thread made after the change gets
 * it, the running isolates keep theirs), the thread is made, and the process's own minimum is
 * put back once the thread is online (its isolate exists then). Another thread made in between
 * may start at the bound too: more memory for it, nothing else.
 *
 * Without an explicit `--max-semi-space-size` (tests, embedders) nothing is changed: V8's
 * default bound is not known here.
 */
import v8 from 'node:v8';
import type { Worker } from 'node:worker_threads';

/** The semi-space sizes given to this process (MiB), null where not given. */
export interface SemiSpaceFlags {
  minMiB: number | null;
  maxMiB: number | null;
}

/**
 * Reads `--min-semi-space-size` and `--max-semi-space-size` (also with underscores, `=N` or a
 * separate `N`) from `args`; the last one given wins, as in V8.
 * @param args V8 options in the order they take effect ({@link processV8Args})
 */
export function semiSpaceFlags(args: readonly string[]): SemiSpaceFlags {
  const out: SemiSpaceFlags = { minMiB: null, maxMiB: null };
  for (let i = 0; i < args.length; i++) {
    const m = /^--(min|max)[-_]semi[-_]space[-_]size(?:=(.*))?$/.exec(args[i]);
    if (!m) continue;
    const raw = m[2] ?? args[i + 1];
    const value = Number(raw);
    if (raw === undefined || raw === '' || !Number.isFinite(value) || value < 0) continue;
    if (m[1] === 'min') out.minMiB = value;
    else out.maxMiB = value;
  }
  return out;
}

/**
 * This process's V8 options in the order they take effect: `NODE_OPTIONS`'s words (split on
 * white space; quoting is not read), then `process.execArgv`, since options on the command line
 * win over `NODE_OPTIONS` (checked on Node 20.20.2 with `--max-old-space-size` given both ways).
 */
export function processV8Args(): string[] {
  return [...(process.env.NODE_OPTIONS ?? '').split(/\s+/).filter((w) => w !== ''), ...process.execArgv];
}

/**
 * Calls `start` (which must make the thread synchronously and return it) with V8's minimum
 * semi-space raised to `flags.maxMiB`, and puts the minimum back (`flags.minMiB`, or V8's
 * default) when the thread is online, fails or exits. With no `maxMiB`, `start` runs as it is.
 * @param flags the process's semi-space flags (default: read from {@link processV8Args})
 * @returns what `start` returned
 */
export function startAtFullYoungGeneration<T extends Worker>(start: () => T, flags: SemiSpaceFlags = semiSpaceFlags(processV8Args())): T {
  const max = flags.maxMiB;
  if (max === null || max <= (flags.minMiB ?? 0)) return start();
  v8.setFlagsFromString(`--min-semi-space-size=${max}`);
  let restored = false;
  const restore = () => {
    if (restored) return;
    restored = true;
    // 0 is V8's "not given": it picks its own initial size again.
    v8.setFlagsFromString(`--min-semi-space-size=${flags.minMiB ?? 0}`);
  };
  let thread: T;
  try {
    thread = start();
  } catch (err) {
    restore();
    throw err;
  }
  thread.once('online', restore);
  thread.once('error', restore);
  thread.once('exit', restore);
  return thread;
}

/** The size of V8's new space (the young generation) of the calling thread's isolate, in bytes. */
export function newSpaceBytes(): number {
  return v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}
