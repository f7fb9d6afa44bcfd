/**
 * Process tree of the service, read from /proc: RSS and CPU of the service and its forked
 * workers. TreeSampler samples it every 200 ms and keeps overall and per-scenario peaks.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { round } from './stats';

const CLK_TCK = (() => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

interface ProcStat {
  state: string; // R, S, D, Z, ...
  ppid: number;
  cpuTicks: number; // utime + stime
  startTime: number; // since boot, in ticks: identifies the process (pids get reused)
}

export function readStat(pid: number): ProcStat | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' '); // fields from #3 (state) on
    return { state: f[0], ppid: Number(f[1]), cpuTicks: Number(f[11]) + Number(f[12]), startTime: Number(f[19]) };
  } catch {
    return null;
  }
}

/** VmRSS and VmHWM (peak RSS) of a process, in KiB; null when it is gone. */
export function readMem(pid: number): { rssKb: number; hwmKb: number } | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+)/m.exec(s);
    const hwm = /^VmHWM:\s+(\d+)/m.exec(s);
    if (!rss || !hwm) return null;
    return { rssKb: Number(rss[1]), hwmKb: Number(hwm[1]) };
  } catch {
    return null;
  }
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const txt = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
        if (txt) for (const c of txt.split(/\s+/)) out.push(Number(c));
      } catch {
        /* thread gone */
      }
    }
  } catch {
    /* process gone */
  }
  return out;
}

function descendantsOf(pid: number): number[] {
  const out: number[] = [];
  const stack = childrenOf(pid);
  while (stack.length) {
    const p = stack.pop() as number;
    out.push(p);
    stack.push(...childrenOf(p));
  }
  return out;
}

function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
  } catch {
    return '';
  }
}

export interface PhaseResources {
  main_peak_rss_mb: number;
  total_peak_rss_mb: number; // max over samples of Σ VmRSS (main + workers)
  workers_peak_rss_mb: number; // max over samples of Σ VmRSS (workers)
  main_cpu_s: number;
  workers_cpu_s: number;
  harness_cpu_s: number;
  wall_s: number;
  samples: number;
}

/** Samples the service tree every `intervalMs`; keeps overall and per-phase peaks. */
export class TreeSampler {
  private timer: NodeJS.Timeout | null = null;
  /** Every process seen in the tree: pid → start time (to kill survivors safely). */
  readonly seen = new Map<number, { startTime: number; cmd: string }>();
  private overall = { mainRss: 0, totalRss: 0, workersRss: 0, samples: 0 };
  private phase = { mainRss: 0, totalRss: 0, workersRss: 0, samples: 0 };
  private phaseStart = { wall: 0, mainTicks: 0, workerTicks: new Map<number, number>(), harness: process.cpuUsage() };
  lastWorkerPids: number[] = [];

  constructor(readonly pid: number) {}

  start(intervalMs = 200): void {
    this.tick();
    this.timer = setInterval(() => this.tick(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  tick(): void {
    const main = readMem(this.pid);
    if (!main) return;
    const kids = descendantsOf(this.pid);
    this.lastWorkerPids = kids;
    let workers = 0;
    for (const k of kids) {
      if (!this.seen.has(k)) {
        const st = readStat(k);
        if (st) this.seen.set(k, { startTime: st.startTime, cmd: cmdline(k) });
      }
      workers += readMem(k)?.rssKb ?? 0;
    }
    for (const acc of [this.overall, this.phase]) {
      acc.mainRss = Math.max(acc.mainRss, main.rssKb, acc === this.overall ? main.hwmKb : 0);
      acc.workersRss = Math.max(acc.workersRss, workers);
      acc.totalRss = Math.max(acc.totalRss, main.rssKb + workers);
      acc.samples++;
    }
  }

  beginPhase(): void {
    this.tick();
    this.phase = { mainRss: 0, totalRss: 0, workersRss: 0, samples: 0 };
    const wt = new Map<number, number>();
    for (const k of descendantsOf(this.pid)) wt.set(k, readStat(k)?.cpuTicks ?? 0);
    this.phaseStart = {
      wall: performance.now(),
      mainTicks: readStat(this.pid)?.cpuTicks ?? 0,
      workerTicks: wt,
      harness: process.cpuUsage(),
    };
    this.tick();
  }

  endPhase(): PhaseResources {
    this.tick();
    const mainTicks = (readStat(this.pid)?.cpuTicks ?? 0) - this.phaseStart.mainTicks;
    let workerTicks = 0;
    for (const k of descendantsOf(this.pid)) workerTicks += (readStat(k)?.cpuTicks ?? 0) - (this.phaseStart.workerTicks.get(k) ?? 0);
    const h = process.cpuUsage(this.phaseStart.harness);
    const mb = (kb: number) => round(kb / 1024) as number;
    return {
      main_peak_rss_mb: mb(this.phase.mainRss),
      workers_peak_rss_mb: mb(this.phase.workersRss),
      total_peak_rss_mb: mb(this.phase.totalRss),
      main_cpu_s: round(mainTicks / CLK_TCK, 2) as number,
      workers_cpu_s: round(workerTicks / CLK_TCK, 2) as number,
      harness_cpu_s: round((h.user + h.system) / 1e6, 2) as number,
      wall_s: round((performance.now() - this.phaseStart.wall) / 1000, 2) as number,
      samples: this.phase.samples,
    };
  }

  overallPeaks(): {
    main_peak_rss_mb: number;
    workers_peak_rss_mb: number;
    total_peak_rss_mb: number;
    main_vmhwm_mb: number | null;
    workers_vmhwm_sum_mb: number;
    worker_processes: number;
  } {
    this.tick();
    const mb = (kb: number) => round(kb / 1024) as number;
    const kids = descendantsOf(this.pid);
    return {
      main_peak_rss_mb: mb(this.overall.mainRss),
      workers_peak_rss_mb: mb(this.overall.workersRss),
      total_peak_rss_mb: mb(this.overall.totalRss),
      main_vmhwm_mb: readMem(this.pid) ? mb((readMem(this.pid) as { hwmKb: number }).hwmKb) : null,
      workers_vmhwm_sum_mb: mb(kids.reduce((a, k) => a + (readMem(k)?.hwmKb ?? 0), 0)),
      worker_processes: kids.length,
    };
  }
}
