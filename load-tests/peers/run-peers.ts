/**
 * One bench-peers run from start to end: our service (its own process, temp SQLite file), then
 * BullMQ at each concurrency, then Agenda, each through backlog → e2e → herd, on one machine in
 * one run, then graphile-worker and pg-boss; with `--rounds N` that sequence N times (a fresh
 * service and fresh queues or databases each round), so the systems take turns under the same
 * machine conditions. Redis is started here (once) when REDIS_URL is not set, PostgreSQL (once,
 * when a PostgreSQL peer or `--ours-store postgres` needs it) when POSTGRES_URL is not set.
 * Everything is stopped and the temp dir
 * removed in every case (run control in ../bench/run-harness.ts: overall timeout, hard failsafe,
 * SIGINT/SIGTERM). Returns the exit code (0 every scenario ran, 1 one failed, 2 usage).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { HttpClient } from '../bench/http-client';
import { loadavgs } from '../bench/results-file';
import { run, sleep } from '../bench/run-control';
import { recordStep, RunGuard, runHarness } from '../bench/run-harness';
import { freePort, Service } from '../bench/service-process';
import { OursSetup, oursBacklog, oursEndToEnd, oursHerd, oursWarmup } from './ours';
import { parsePeerOptions, PEERS_HELP, PeerOptions, PG_SYSTEMS } from './peer-options';
import { initialPeerReport, ratios, summarizeRounds, writePeerReport } from './peer-report';
import { PeerSetup, peerBacklog, peerEndToEnd, peerHerd } from './peer-scenarios';
import { ensurePostgres, PgHandle } from './postgres-server';
import { PgStatements } from './pg-statements';
import { ensureRedis, RedisHandle } from './redis-server';

type Scenario = [string, () => Promise<Record<string, unknown>>];

/** Runs the scenarios in order into `into`; a failed one records its error and the rest still run. */
async function runScenarios(name: string, scenarios: Scenario[], into: Record<string, unknown>, errors: string[]): Promise<boolean> {
  let ok = true;
  for (const [scenario, fn] of scenarios) {
    if (run.signal.aborted) return false;
    process.stderr.write(`[bench-peers] ${name} ${scenario} ...\n`);
    ok = (await recordStep(into, scenario, `${name} ${scenario}`, errors, fn)) && ok;
    await sleep(500).catch(() => undefined);
  }
  return ok;
}

/**
 * Our service (its own process, a fresh temp SQLite file in `tmpDir`, or with `--ours-store
 * postgres` a fresh database on `pg`, dropped after) through backlog → e2e → herd into
 * `systems.ours`; failures also go to `errors`.
 */
async function runOurs(
  o: PeerOptions,
  tmpDir: string,
  systems: Record<string, unknown>,
  errors: string[],
  guard: RunGuard,
  redisKill: () => void,
  pg: PgHandle | null,
): Promise<boolean> {
  fs.mkdirSync(tmpDir, { recursive: true });
  const port = await freePort();
  const db = pg ? `bench_ours_${process.pid}_${Date.now().toString(36)}` : null;
  const oursUrl = pg && db ? await pg.createDatabase(db) : null;
  const extraEnv = oursUrl ? { SCHEDULER_STORE: 'postgres', POSTGRES_URL: oursUrl } : undefined;
  // --pg-statements: only on the bench's own cluster, which loaded pg_stat_statements.
  const statements = o.pgStatements && oursUrl && pg?.owned ? await PgStatements.open(oursUrl) : null;
  const svc = new Service(tmpDir, port, {
    workers: null,
    workerConcurrency: o.workerConcurrency,
    partitions: null,
    logLevel: o.logLevel,
    cpuProfDir: o.cpuProfDir,
    extraEnv,
  });
  guard.onKill(() => {
    svc.killNow();
    redisKill();
  });
  const client = new HttpClient('127.0.0.1', port, 64);
  const sys: Record<string, unknown> = {};
  systems.ours = sys;
  let failed = false;
  try {
    svc.start();
    sys.pid = svc.child?.pid ?? null; // names the service's --cpu-prof file (CPU.<date>.<time>.<pid>.…)
    await svc.waitReady(client);
    await sleep(300); // let the workers report in
    const s: OursSetup = {
      tasks: o.tasks,
      herd: o.herd,
      herdLeadMs: o.herdLeadMs,
      backlogLeadMs: o.backlogLeadMs,
      pollMs: o.oursPollMs,
      batchSize: o.batchSize,
      inFlight: o.inFlight,
      timeBoundS: o.timeBoundS,
      pgPid: pg?.pid ?? null,
      statements,
    };
    const ok = await runScenarios(
      'ours',
      [
        ...(o.warmup > 0 ? ([['warmup', () => oursWarmup(client, s, o.warmup)]] as Scenario[]) : []),
        ['backlog', () => oursBacklog(client, svc, s)],
        ['e2e', () => oursEndToEnd(client, svc, s)],
        ['herd', () => oursHerd(client, svc, s)],
      ],
      sys,
      errors,
    );
    failed ||= !ok;
  } catch (err) {
    failed = true;
    sys.error = (err as Error).message;
    errors.push(`ours: ${(err as Error).message}`);
  } finally {
    client.close();
    await statements?.close();
    sys.shutdown = await svc.stop(10_000).catch((err: Error) => ({ error: err.message }));
    if (pg && db) await pg.dropDatabase(db).catch(() => undefined);
    if (failed) process.stderr.write(`[bench-peers] service log tail:\n${svc.logTail(20)}\n`);
  }
  return failed;
}

/** Why the run-wide signal stopped the run (the overall timeout, or SIGINT/SIGTERM). */
function stopReason(): string {
  const reason = run.signal.reason as { message?: string } | undefined;
  return String(reason?.message ?? reason);
}

/** One setup per peer run: BullMQ at each concurrency, then Agenda, graphile-worker (both), pg-boss. */
function peerSetups(o: PeerOptions, redis: RedisHandle | null, pg: PgHandle | null): PeerSetup[] {
  const peers: PeerSetup[] = [];
  const common = {
    redisUrl: redis?.url ?? '',
    redisPid: redis?.pid ?? null,
    pg: null,
    batchSize: o.batchSize,
    herdLeadMs: o.herdLeadMs,
    processEveryMs: o.agendaProcessEveryMs,
    lockLimit: o.agendaLockLimit,
    warmup: o.warmup,
  };
  if (o.systems.has('bullmq')) {
    for (const c of o.bullmqConcurrency)
      peers.push({
        ...common,
        system: 'bullmq',
        label: `bullmq_c${c}`,
        concurrency: c,
        inFlight: o.inFlight,
        tasks: o.tasks,
        herd: o.herd,
        timeBoundS: o.timeBoundS,
      });
  }
  if (o.systems.has('agenda')) {
    peers.push({
      ...common,
      system: 'agenda',
      label: `agenda_c${o.agendaConcurrency}`,
      concurrency: o.agendaConcurrency,
      inFlight: o.agendaInFlight,
      tasks: o.agendaTasks,
      herd: o.agendaHerd,
      timeBoundS: o.agendaTimeBoundS,
    });
  }
  const pgCommon = { ...common, pg, inFlight: o.inFlight, tasks: o.tasks, herd: o.herd, timeBoundS: o.timeBoundS };
  for (const batched of [false, true])
    if (o.systems.has(batched ? 'graphile_batched' : 'graphile'))
      peers.push({
        ...pgCommon,
        system: 'graphile',
        label: `${batched ? 'graphile_batched' : 'graphile'}_c${o.graphileConcurrency}`,
        concurrency: o.graphileConcurrency,
        graphileBatched: batched,
      });
  if (o.systems.has('pgboss'))
    peers.push({
      ...pgCommon,
      system: 'pgboss',
      label: `pgboss_b${o.pgbossBatchSize}${o.pgbossWorkers > 1 ? `_w${o.pgbossWorkers}` : ''}`,
      concurrency: o.pgbossWorkers,
      pgbossBatchSize: o.pgbossBatchSize,
      pgbossPollingMs: o.pgbossPollingMs,
      pgbossWorkers: o.pgbossWorkers,
    });
  return peers;
}

/**
 * Runs bench-peers with the process's arguments; writes the report (JSON to stdout and the
 * results file, table to stderr) unless the flags were bad or `--help`.
 * @returns the exit code: 0 every scenario ran, 1 one failed, 2 usage
 */
export function mainPeers(): Promise<number> {
  return runHarness<PeerOptions>({
    name: 'bench-peers',
    help: PEERS_HELP,
    parse: parsePeerOptions,
    needsService: (o) => o.systems.has('ours'),
    hardKills: 'what it started',
    hardMarginMs: 30_000,
    write: (report, o) => writePeerReport(report, o.out),
    async run(o, guard) {
      const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sched-bench-peers-'));
      let redis: RedisHandle | null = null;
      let pg: PgHandle | null = null;
      const removeTmp = () => {
        if (!o.keepTmp) fs.rmSync(tmpDir, { recursive: true, force: true });
      };
      const killRedis = () => {
        redis?.killNow();
        pg?.killNow();
        removeTmp();
      };
      guard.onKill(killRedis);
      const report = initialPeerReport(o);
      let failed = false;
      try {
        if (o.systems.has('bullmq') || o.systems.has('agenda')) {
          redis = await ensureRedis(tmpDir);
          report.settings.redis = redis.settings;
        }
        if (PG_SYSTEMS.some((x) => o.systems.has(x)) || (o.systems.has('ours') && o.oursStore === 'postgres')) {
          pg = await ensurePostgres(tmpDir, { statements: o.pgStatements });
          report.settings.postgres = pg.settings;
        }
        const peers = peerSetups(o, redis, pg);
        for (let n = 1; n <= o.rounds; n++) {
          if (run.signal.aborted) throw new Error(`stopped before round ${n} of ${o.rounds}: ${stopReason()}`);
          if (o.rounds > 1) process.stderr.write(`[bench-peers] round ${n} of ${o.rounds}\n`);
          const round = { systems: {} as Record<string, Record<string, unknown>>, ratios: {} as Record<string, unknown> };
          report.rounds.push(round);
          const errors: string[] = [];
          if (o.systems.has('ours'))
            failed =
              (await runOurs(
                o,
                path.join(tmpDir, `ours-${n}`),
                round.systems,
                errors,
                guard,
                killRedis,
                o.oursStore === 'postgres' ? pg : null,
              )) || failed;
          for (const p of peers) {
            if (run.signal.aborted) {
              failed = true;
              errors.push(`${p.label}: not run: ${stopReason()}`);
              continue;
            }
            const sys: Record<string, unknown> = {};
            round.systems[p.label] = sys;
            const ok = await runScenarios(
              p.label,
              [
                ['backlog', () => peerBacklog(p)],
                ['e2e', () => peerEndToEnd(p)],
                ['herd', () => peerHerd(p)],
              ],
              sys,
              errors,
            );
            failed ||= !ok;
          }
          round.ratios = ratios(round.systems);
          report.errors.push(...errors.map((e) => (o.rounds > 1 ? `round ${n}: ${e}` : e)));
        }
      } catch (err) {
        failed = true;
        report.errors.push((err as Error).message);
      } finally {
        await redis?.stop().catch(() => undefined);
        await pg?.stop().catch(() => undefined);
        if (o.keepTmp) process.stderr.write(`[bench-peers] temp dir kept: ${tmpDir}\n`);
        else fs.rmSync(tmpDir, { recursive: true, force: true });
      }
      summarizeRounds(report);
      report.machine.loadavg_at_end = loadavgs();
      return { report, failed };
    },
  });
}
