/**
 * Summarises V8 .cpuprofile files (from `node --cpu-prof`): self and total time by function
 * (function name + file:line) and self time by area (project file, npm package, node internals,
 * native/GC/idle). Used to read profiles taken with `bench-throughput --cpu-prof DIR`.
 *
 * Usage: node dist/load-tests/cpuprofile-summary.js <file.cpuprofile | dir> [--top 25] [--json]
 *
 * Self time of a sample is the time until the next sample (timeDeltas[i + 1]). Note that the V8
 * sampler also samples while the thread is blocked in a synchronous native call (e.g. a
 * better-sqlite3 statement waiting on fsync), so self time of a native frame is wall time on the
 * JS thread, not only CPU; "(idle)" is the event loop waiting for work.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface Row {
  key: string;
  ms: number;
  pct: number;
}

export interface Summary {
  file: string;
  duration_ms: number;
  sampled_ms: number;
  busy_ms: number; // everything but (idle)
  self: Row[];
  total: Row[];
  areas: Row[];
  /** Longest stretches of consecutive samples under one top-level frame (≈ one macrotask). */
  long_tasks: Array<{ at_ms: number; ms: number; entry: string; heaviest: string }>;
}

const ROOT = path.resolve(__dirname, '..', '..');

function shortUrl(url: string): string {
  if (!url) return '';
  let u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('/node_modules/');
  if (nm >= 0) return u.slice(nm + '/node_modules/'.length);
  if (u.startsWith(ROOT + '/')) u = u.slice(ROOT.length + 1);
  return u;
}

function frameKey(f: CallFrame): string {
  const name = f.functionName || '(anonymous)';
  const url = shortUrl(f.url);
  return url ? `${name}  ${url}:${f.lineNumber + 1}` : name;
}

/** Where a frame lives: project file, npm package, node internals or a VM pseudo-frame. */
function areaOf(f: CallFrame): string {
  const url = f.url.replace(/^file:\/\//, '');
  if (!url) {
    if (f.functionName.startsWith('(')) return f.functionName; // (idle) (program) (garbage collector)
    return `native: ${f.functionName || '(anonymous)'}`;
  }
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + '/node_modules/'.length).split('/');
    return `npm: ${rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (url.startsWith('node:')) return 'node internals';
  return shortUrl(url);
}

export function summarise(file: string, top = 25): Summary {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of prof.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const selfUs = new Map<number, number>();
  const { samples, timeDeltas } = prof;
  for (let i = 0; i < samples.length; i++) {
    const dt = i + 1 < timeDeltas.length ? timeDeltas[i + 1] : 0;
    if (dt <= 0) continue;
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + dt);
  }
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  const areas = new Map<string, number>();
  let sampled = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    sampled += us;
    if (node.callFrame.functionName === '(idle)') idle += us;
    const k = frameKey(node.callFrame);
    self.set(k, (self.get(k) ?? 0) + us);
    const a = areaOf(node.callFrame);
    areas.set(a, (areas.get(a) ?? 0) + us);
    // Total (inclusive) time: every distinct function on the stack, once per sample.
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const n = byId.get(cur);
      if (!n) break;
      const key = frameKey(n.callFrame);
      if (key === '(root)' || seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + us);
    }
  }
  // Long tasks: consecutive samples whose stack starts with the same child of (root).
  const topOf = (id: number): number => {
    let cur = id;
    for (let p = parent.get(cur); p !== undefined && byId.get(p)?.callFrame.functionName !== '(root)'; p = parent.get(cur)) cur = p;
    return cur;
  };
  const stretches: Summary['long_tasks'] = [];
  let t = 0;
  let i = 0;
  while (i < samples.length) {
    const top = topOf(samples[i]);
    const name = byId.get(top)?.callFrame.functionName ?? '';
    const startT = t;
    const leafUs = new Map<string, number>();
    let j = i;
    let dur = 0;
    while (j < samples.length && topOf(samples[j]) === top) {
      const dt = j + 1 < timeDeltas.length ? timeDeltas[j + 1] : 0;
      dur += dt;
      const leaf = byId.get(samples[j]);
      if (leaf) leafUs.set(frameKey(leaf.callFrame), (leafUs.get(frameKey(leaf.callFrame)) ?? 0) + dt);
      t += j + 1 < timeDeltas.length ? timeDeltas[j + 1] : 0;
      j++;
    }
    if (!['(idle)', '(program)', '(garbage collector)'].includes(name)) {
      const heaviest = [...leafUs.entries()].sort((a, b) => b[1] - a[1])[0];
      stretches.push({
        at_ms: Math.round(startT / 1000),
        ms: Math.round(dur / 100) / 10,
        entry: frameKey(byId.get(top)?.callFrame as CallFrame),
        heaviest: heaviest ? `${heaviest[0]} (${Math.round(heaviest[1] / 100) / 10} ms)` : '',
      });
    }
    i = j;
  }
  stretches.sort((a, b) => b.ms - a.ms);

  const rows = (m: Map<string, number>, n: number): Row[] =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([key, us]) => ({ key, ms: Math.round(us / 100) / 10, pct: Math.round((1000 * us) / Math.max(1, sampled)) / 10 }));
  return {
    file,
    duration_ms: Math.round((prof.endTime - prof.startTime) / 1000),
    sampled_ms: Math.round(sampled / 1000),
    busy_ms: Math.round((sampled - idle) / 1000),
    self: rows(self, top),
    total: rows(total, top),
    areas: rows(areas, top),
    long_tasks: stretches.slice(0, Math.min(top, 15)),
  };
}

function printSummary(s: Summary): void {
  const out: string[] = [];
  out.push(`== ${s.file}`);
  out.push(`   duration ${s.duration_ms} ms, sampled ${s.sampled_ms} ms, busy (not idle) ${s.busy_ms} ms`);
  const table = (title: string, rows: Row[]) => {
    out.push(`-- ${title}`);
    for (const r of rows) out.push(`${String(r.ms).padStart(10)} ms ${String(r.pct).padStart(5)}%  ${r.key}`);
  };
  table('self time by area', s.areas);
  table('self time by function', s.self);
  table('total (inclusive) time by function', s.total);
  out.push('-- longest stretches under one top-level frame (≈ event-loop blocks)');
  for (const l of s.long_tasks) out.push(`${String(l.ms).padStart(10)} ms  at ${l.at_ms} ms  ${l.entry}  ← mostly ${l.heaviest}`);
  process.stdout.write(`${out.join('\n')}\n\n`);
}

const USAGE = 'usage: cpuprofile-summary <file.cpuprofile | dir> [--top 25] [--json]\n';

/** A bad command line or an unreadable input: one line on stderr and exit code 2, no stack. */
class UsageError extends Error {}

/** The command line's flags and profile paths; a bad flag is a {@link UsageError}. */
function commandLine() {
  try {
    return parseArgs({
      args: process.argv.slice(2),
      allowPositionals: true,
      options: { top: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' } },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function main(): void {
  const { values, positionals } = commandLine();
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  if (positionals.length === 0) throw new UsageError('no profile given');
  const top = Number(values.top ?? 25);
  if (!Number.isInteger(top) || top < 1) throw new UsageError(`--top must be a whole number ≥ 1, not ${JSON.stringify(values.top)}`);
  const files: string[] = [];
  for (const p of positionals) {
    if (!fs.existsSync(p)) throw new UsageError(`${p}: no such file or folder`);
    if (fs.statSync(p).isDirectory()) {
      const found = fs
        .readdirSync(p)
        .sort()
        .filter((f) => f.endsWith('.cpuprofile'));
      if (found.length === 0) throw new UsageError(`${p}: no .cpuprofile files in this folder`);
      for (const f of found) files.push(path.join(p, f));
    } else files.push(p);
  }
  const summaries = files.map((f) => {
    try {
      return summarise(f, top);
    } catch (err) {
      throw new UsageError(`${f}: not a readable .cpuprofile (${(err as Error).message})`);
    }
  });
  if (values.json) process.stdout.write(`${JSON.stringify(summaries, null, 2)}\n`);
  else summaries.forEach(printSummary);
}

if (require.main === module) {
  try {
    main();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`cpuprofile-summary: ${err.message}\n${USAGE}`);
    process.exitCode = 2;
  }
}
