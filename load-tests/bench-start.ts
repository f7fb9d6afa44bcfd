/**
 * Start-up time of `npm start` on a built tree: spawn to the first 200 from `/readyz`, `--runs`
 * times (default 5), each on a fresh SQLite file on a free port; prints every run and the median.
 * Refuses to run when dist/ is stale (`npm start` would rebuild, and the figure would be the
 * build's). With `--compare` each run also starts `node <flags> dist/src/main.js` directly (what
 * `npm start` runs), taking turns, to show what npm and bin/ensure-built.js add.
 * Usage: `npm run build && node dist/load-tests/bench-start.js [--runs N] [--compare]`.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { npmStart } from './bench/npm-start';
import { ROOT, SERVICE_NODE_FLAGS } from './bench/paths';
import { freePort } from './bench/service-process';
import { median, round } from './bench/stats';

async function main(): Promise<void> {
  const i = process.argv.indexOf('--runs');
  const runs = i > 0 ? Number(process.argv[i + 1]) : 5;
  const check = spawnSync(process.execPath, [path.join(ROOT, 'bin', 'ensure-built.js'), '--check'], { cwd: ROOT, encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`dist/ is stale, run npm run build first: ${check.stderr.trim()}`);
  const variants: Array<[string, string[]]> = [['npm start', ['npm', 'start']]];
  if (process.argv.includes('--compare'))
    variants.push(['node dist/src/main.js', [process.execPath, ...SERVICE_NODE_FLAGS, 'dist/src/main.js']]);
  const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let run = 1; run <= runs; run++) {
    for (const [name, command] of variants) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-start-'));
      const port = await freePort();
      const env = { ...process.env, PORT: String(port), HOST: '127.0.0.1', SQLITE_PATH: path.join(dir, 'scheduler.db'), LOG_LEVEL: 'warn' };
      const proc = npmStart(ROOT, env, command);
      try {
        const ms = await proc.ready(`http://127.0.0.1:${port}`, 60_000);
        if (/rebuilding/.test(proc.output())) throw new Error(`npm start rebuilt dist/:\n${proc.output()}`);
        times.get(name)?.push(ms);
        console.log(`run ${run}, ${name}: ready in ${Math.round(ms)} ms`);
      } finally {
        await proc.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  for (const [name, ms] of times) {
    console.log(
      JSON.stringify({
        command: name,
        runs,
        median_ms: round(median(ms), 0),
        min_ms: round(Math.min(...ms), 0),
        max_ms: round(Math.max(...ms), 0),
      }),
    );
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
