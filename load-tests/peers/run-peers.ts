/**
 * One bench-peers run from start to end: our service (its own process, temp SQLite file), then
 * BullMQ at each concurrency, then Agenda, each through backlog → e2e → herd, on one machine in
 * one run; Redis started here when REDIS_URL is not set. Everything is stopped and the temp dir
 * removed in every case (overall timeout, hard failsafe, SIGINT/SIGTERM). Returns the exit code
 * (0 every scenario ran, 1 one failed, 2 usage).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseOptions } from '../bench/cli-options';
import { HttpClient } from '../bench/http-client';
import { SERVICE_ENTRY } from '../bench/paths';
import { run, sleep } from '../bench/run-control';
import { freePort, Service } from '../bench/service-process';
import { round } from '../bench/stats';
import { OursSetup, oursBacklog, oursEndToEnd, oursHerd } from './ours';
import { parsePeerOptions, PEERS_HELP, PeerOptions } from './peer-options';
import { initialPeerReport, ratios, writePeerReport } from './peer-report';
import { PeerSetup, peerBacklog, peerEndToEnd, peerHerd } from './peer-scenarios';
import { ensureRedis, RedisHandle } from './redis-server';

type Scenario = [string, () => Promise<Record<string, unknown>>];

/** Runs the scenarios in order into `into`; a failed one records its error and the rest still run. */
async function runScenarios(name: string, scenarios: Scenario[], into: Record<string, unknown>, errors: string[]): Promise<boolean> {
  let ok = true;
  for (const [scenario, fn] of scenarios) {
    if (run.signal.aborted) return false;
    process.stderr.write(`[bench-peers] ${name} ${scenario} ...\n`);
    try {
      into[scenario] = await fn();
    } catch (err) {
      ok = false;
      const msg = (err as Error).message;
      into[scenario] = { error: msg };
      errors.push(`${name} ${scenario}: ${msg}`);
    }
    await sleep(500).catch(() => undefined);
  }
  return ok;
}

export async function mainPeers(): Promise<number> {
  let opts: PeerOptions | null;
  try {
    opts = parsePeerOptions(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${PEERS_HELP}`);
    return 2;
  }
  if (opts === null) {
    process.stdout.write(PEERS_HELP);
    return 0;
  }
  const o = opts;
  if (o.systems.has('ours') && !fs.existsSync(SERVICE_ENTRY)) {
    process.stderr.write(`${SERVICE_ENTRY} not found: run \`npm run build\` first\n`);
    return 2;
  }
  const startedWall = Date.now();
  const timeoutMs = o.timeoutS * 1000;
  const overall = setTimeout(() => run.abort(new Error(`overall timeout of ${o.timeoutS} s reached`)), timeoutMs);
  overall.unref();
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-bench-peers-'));
  let svc: Service | null = null;
  let redis: RedisHandle | null = null;
  const cleanupSync = () => {
    svc?.killNow();
    redis?.killNow();
    if (!o.keepTmp) fs.rmSync(tmpDir, { recursive: true, force: true });
  };
  const hard = setTimeout(() => {
    process.stderr.write('bench-peers: hard timeout, killing what it started\n');
    cleanupSync();
    process.exit(124);
  }, timeoutMs + 30_000);
  hard.unref();
  const onSignal = (sig: NodeJS.Signals) => {
    if (run.signal.aborted) {
      cleanupSync();
      process.exit(130);
    }
    run.abort(new Error(`interrupted by ${sig}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  const report = initialPeerReport(o);
  let failed = false;
  try {
    if (o.systems.has('ours')) {
      const port = await freePort();
      const svcOpts = { ...(parseOptions([]) as NonNullable<ReturnType<typeof parseOptions>>), logLevel: o.logLevel, keepTmp: o.keepTmp };
      svc = new Service(tmpDir, port, svcOpts);
      const client = new HttpClient('127.0.0.1', port, 64);
      const sys: Record<string, unknown> = {};
      report.systems.ours = sys;
      try {
        svc.start();
        await svc.waitReady(client);
        await sleep(300); // let the workers report in
        const s: OursSetup = { tasks: o.tasks, herd: o.herd, herdLeadMs: o.herdLeadMs, backlogLeadMs: o.backlogLeadMs, batchSize: o.batchSize, inFlight: o.inFlight, timeBoundS: o.timeBoundS };
        const ok = await runScenarios('ours', [
          ['backlog', () => oursBacklog(client, svc as Service, s)],
          ['e2e', () => oursEndToEnd(client, svc as Service, s)],
          ['herd', () => oursHerd(client, svc as Service, s)],
        ], sys, report.errors);
        failed ||= !ok;
      } catch (err) {
        failed = true;
        sys.error = (err as Error).message;
        report.errors.push(`ours: ${(err as Error).message}`);
      } finally {
        client.close();
        sys.shutdown = await svc.stop(10_000).catch((err: Error) => ({ error: err.message }));
        if (failed) process.stderr.write(`[bench-peers] service log tail:\n${svc.logTail(20)}\n`);
      }
    }
    if (o.systems.has('bullmq') || o.systems.has('agenda')) {
      redis = await ensureRedis(tmpDir);
      report.settings.redis = redis.settings;
      const peers: PeerSetup[] = [];
      const common = { redisUrl: redis.url, redisPid: redis.pid, batchSize: o.batchSize, herdLeadMs: o.herdLeadMs, processEveryMs: o.agendaProcessEveryMs, lockLimit: o.agendaLockLimit };
      if (o.systems.has('bullmq')) {
        for (const c of o.bullmqConcurrency) peers.push({ ...common, system: 'bullmq', label: `bullmq_c${c}`, concurrency: c, inFlight: o.inFlight, tasks: o.tasks, herd: o.herd, timeBoundS: o.timeBoundS });
      }
      if (o.systems.has('agenda')) {
        peers.push({ ...common, system: 'agenda', label: `agenda_c${o.agendaConcurrency}`, concurrency: o.agendaConcurrency, inFlight: o.agendaInFlight, tasks: o.agendaTasks, herd: o.agendaHerd, timeBoundS: o.agendaTimeBoundS });
      }
      for (const p of peers) {
        if (run.signal.aborted) break;
        const sys: Record<string, unknown> = {};
        report.systems[p.label] = sys;
        const ok = await runScenarios(p.label, [
          ['backlog', () => peerBacklog(p)],
          ['e2e', () => peerEndToEnd(p)],
          ['herd', () => peerHerd(p)],
        ], sys, report.errors);
        failed ||= !ok;
      }
    }
  } catch (err) {
    failed = true;
    report.errors.push((err as Error).message);
  } finally {
    await redis?.stop().catch(() => undefined);
    if (o.keepTmp) process.stderr.write(`[bench-peers] temp dir kept: ${tmpDir}\n`);
    else fs.rmSync(tmpDir, { recursive: true, force: true });
    clearTimeout(overall);
    clearTimeout(hard);
  }
  report.ratios = ratios(report.systems);
  report.machine.loadavg_at_end = os.loadavg().map((l) => round(l, 2));
  report.ok = !failed;
  report.duration_s = round((Date.now() - startedWall) / 1000, 1);
  writePeerReport(report, o.out);
  return failed ? 1 : 0;
}
