/**
 * `npm start` as a child process, timed from spawn to the first 200 from `/readyz`: used by the
 * start-up benchmark (load-tests/bench-start.ts) and the start-up test (test/docs/npm-start.test.ts).
 */
import { ChildProcess, spawn } from 'node:child_process';

/** A running `npm start`; `stop()` ends its whole process group. */
export interface NpmStart {
  child: ChildProcess;
  /** stdout and stderr so far (npm's banners, bin/ensure-built.js's line, the service's logs). */
  output(): string;
  /** Resolves with the ms from spawn to the first 200 from `url/readyz`; rejects after `timeoutMs` or on exit. */
  ready(url: string, timeoutMs: number): Promise<number>;
  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves once npm has exited. */
  stop(graceMs?: number): Promise<void>;
}

/**
 * Spawns `npm start` (or `command`, e.g. the service's own `node … dist/src/main.js` to compare) in
 * `cwd` with `env`, in a process group of its own (so that `stop()` reaches the service and its
 * workers even if npm dies first).
 */
export function npmStart(cwd: string, env: NodeJS.ProcessEnv, command: readonly string[] = ['npm', 'start']): NpmStart {
  const startedAt = performance.now();
  const child = spawn(command[0], command.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  child.stdout?.on('data', (d) => (out += d));
  child.stderr?.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-(child.pid as number), signal);
    } catch {
      /* the group is gone */
    }
  };
  return {
    child,
    output: () => out,
    async ready(url, timeoutMs) {
      const deadline = startedAt + timeoutMs;
      for (;;) {
        if (child.exitCode !== null) throw new Error(`npm start exited early (${child.exitCode}):\n${out}`);
        try {
          const res = await fetch(`${url}/readyz`);
          if (res.status === 200) return performance.now() - startedAt;
        } catch {
          /* not listening yet */
        }
        if (performance.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms:\n${out}`);
        await new Promise((r) => setTimeout(r, 25)); // polling for readiness, not timing logic
      }
    },
    async stop(graceMs = 15_000) {
      signalGroup('SIGTERM');
      const t = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(t);
      signalGroup('SIGKILL'); // anything of the group still alive (a worker that missed the drain)
    },
  };
}
