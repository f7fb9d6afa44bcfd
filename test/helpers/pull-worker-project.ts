import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

/** The repository root (this file runs from dist/test/helpers/). */
export const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

/**
 * Makes a separate Node project in `dir` that depends on this package by path, as a user's
 * application would: its own package.json, `worker.mjs` and `client.mjs` (test/fixtures/pull-worker-app/),
 * which import `actor-task-scheduler/worker` and `actor-task-scheduler/client`. Installs the dependency with `npm install --offline` (a
 * link to the repository); when npm cannot (no cache, no network), makes the same link itself.
 * @returns how the dependency was installed
 */
export async function makePullWorkerProject(dir: string): Promise<'npm' | 'link'> {
  fs.writeFileSync(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: 'pull-worker-app', version: '1.0.0', private: true, type: 'module' }, null, 2),
  );
  for (const file of ['worker.mjs', 'client.mjs']) {
    fs.copyFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'pull-worker-app', file), path.join(dir, file));
  }
  try {
    await promisify(execFile)('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts', REPO_ROOT], {
      cwd: dir,
      timeout: 120_000,
    });
    if (fs.existsSync(path.join(dir, 'node_modules', 'actor-task-scheduler', 'package.json'))) return 'npm';
  } catch {
    /* no npm cache or network: link as npm does */
  }
  fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  fs.rmSync(path.join(dir, 'node_modules', 'actor-task-scheduler'), { recursive: true, force: true });
  fs.symlinkSync(REPO_ROOT, path.join(dir, 'node_modules', 'actor-task-scheduler'), 'dir');
  return 'link';
}

/** One worker process of the project. */
export interface WorkerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves once the worker said it polls (rejects if it exits first). */
  ready: Promise<void>;
  /** SIGKILL and wait for exit. */
  kill9(): Promise<void>;
  /** SIGTERM (graceful close) and wait for exit. */
  stop(): Promise<number | null>;
}

/** Starts `node worker.mjs` in the project `dir` with `env` (SCHEDULER_URL, QUEUE, …). */
export function startPullWorker(dir: string, env: Record<string, string>): WorkerProcess {
  const child = spawn(process.execPath, ['worker.mjs'], { cwd: dir, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes(' polling ')) resolve();
    });
    child.stderr?.on('data', (d) => (out += d));
    void exited.then((code) => reject(new Error(`worker exited (${code}) before polling:\n${out}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    output: () => out,
    ready,
    kill9: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}
