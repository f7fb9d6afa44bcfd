/**
 * Failover benchmark on PostgreSQL (issue 32, must-show 2): three service processes on one
 * PostgreSQL schema (and REDIS_URL when set), `--tasks` side-effect tasks submitted round-robin
 * over all three, and once a third of them have run, one process is either
 * - SIGKILLed with its worker processes (`--mode kill`, a machine crash), or
 * - frozen with SIGSTOP (`--mode stop`; the service process only, its workers finish what they hold)
 *   until the survivors own its partitions and at least one lease TTL has passed, then SIGCONT.
 * `--runs` runs of each mode in a row; every run prints one line of figures and its JSON.
 *
 * Figures per run (all read from the database and the side-effect log, one line per handler run:
 * task id, attempt, member, pid, handler start and end):
 * - take-over: time from the kill/freeze until every partition the victim held is leased to a
 *   survivor under a higher epoch, against the TTL; `owners_ms`: until the survivors report all
 *   partitions owned;
 * - `succeeded`: stored tasks SUCCEEDED (must be `--tasks`); `side_effect_lines`;
 * - `completed_twice`: tasks whose success was recorded more than once (an earlier attempt stored
 *   with outcome SUCCEEDED, or more than one side-effect line for the stored final attempt): must
 *   be 0; `attempt_run_twice` (two runs of one attempt number: two claims of it) must be 0 too;
 *   `earlier_attempts` (stored lost attempts) and how many of them are not `worker_lost`;
 * - `reruns`: extra handler runs (lines of an attempt that is not the task's final one): the
 *   at-least-once re-runs of the victim's in-flight attempts, reported apart (`reruns_by_victim`);
 * - stop mode: `victim_dispatches_after_cont_lost`: handler runs started on the victim's workers
 *   after SIGCONT for a partition it lost that are not the task's final attempt claimed under the
 *   epoch the victim was granted that partition with again (the task row's owner_epoch, written by
 *   the epoch-checked claim; regrants read by polling the leases every 20 ms): must be 0.
 *   `regained` counts the lost partitions handed back to the victim by the rendezvous afterwards.
 * A run fails (exit 1) when a "must" above does not hold; speed is reported, never asserted.
 *
 * Usage: npm run build && POSTGRES_URL=… REDIS_URL=… node dist/load-tests/bench-failover.js
 *          [--tasks 50000] [--runs 5] [--mode kill|stop|both] [--lease-ttl-ms 6000]
 *          [--attempt-lease-ms 5000] [--timeout 900]
 * Writes load-tests/results/failover-latest.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { machineInfo } from './bench/results-file';
import { http } from '../test/helpers/http';
import { Cluster, ownedCount, readSideEffects, startCluster, until } from '../test/helpers/cluster-processes';
import { clusterStoreMissing, StoredLease } from '../test/helpers/cluster-store';
import { partitionOf } from '../src/domain/partition';

const TASK_TYPE = 'failover_side_effect';
const BATCH = 200;
const PARTITIONS = 12;

type Mode = 'kill' | 'stop';

/** A side-effect line of this benchmark's handler. */
interface Effect {
  id: string;
  attempt: number;
  member: string;
  pid: number;
  start: number;
  t: number;
}

/** Handler module: one JSON line per run that returns, with the handler's start time. */
function handlerSource(logPath: string): string {
  return `'use strict';
const fs = require('node:fs');
const LOG = ${JSON.stringify(logPath)};
module.exports = async (payload, ctx) => {
  const start = Date.now();
  await new Promise((resolve) => setImmediate(resolve));
  fs.appendFileSync(LOG, JSON.stringify({ id: ctx.taskId, attempt: ctx.attempt, member: process.env.MEMBER_ID, pid: process.pid, start, t: Date.now() }) + '\\n');
  return { ok: true };
};
`;
}

/**
 * Submits `n` tasks in batches round-robin over `targets()` (as it is at each batch), each task
 * with the idempotency key `f-<i>`: a batch whose request failed (its node died under it) is sent
 * to the next node, and the keys make the repeat return the stored tasks instead of new ones.
 */
function submitAll(targets: () => string[], n: number): Promise<string[]> {
  return (async () => {
    const ids: string[] = [];
    for (let b = 0; b * BATCH < n; b++) {
      const tasks = Array.from({ length: Math.min(BATCH, n - b * BATCH) }, (_, i) => ({
        task_type: TASK_TYPE,
        payload: { n: b * BATCH + i },
        idempotency_key: `f-${b * BATCH + i}`,
      }));
      for (let tries = 0; ; tries++) {
        const live = targets();
        const res = await http('POST', `${live[(b + tries) % live.length]}/api/v1/tasks/batch`, { tasks }).catch((err: Error) => ({
          status: 0,
          body: String(err),
        }));
        if (res.status === 200 || res.status === 202) {
          ids.push(...res.body.tasks.map((t: { task_id: string }) => t.task_id));
          break;
        }
        if (tries >= 8) throw new Error(`batch ${b} answered ${res.status}: ${JSON.stringify(res.body)}`);
        await new Promise((r) => setTimeout(r, 250)); // back off before the next node
      }
    }
    return ids;
  })();
}

async function leasesOf(c: Client): Promise<Map<number, StoredLease>> {
  const { rows } = await c.query<{ partition: number; owner: string; epoch: string; expires_at: string }>(
    'SELECT partition, owner, epoch, expires_at FROM partition_leases',
  );
  return new Map(rows.map((r) => [r.partition, { owner: r.owner, epoch: Number(r.epoch), expiresAt: Number(r.expires_at) }]));
}

async function count(c: Client, sql: string, values: unknown[] = []): Promise<number> {
  const { rows } = await c.query<{ n: string }>(sql, values);
  return Number(rows[0].n);
}

function lineCount(file: string): number {
  return fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').length - 1 : 0;
}

/** One run of `mode`; resolves with its figures (`ok` false when a must did not hold). */
async function run(mode: Mode, tasks: number, ttl: number, attemptLeaseMs: number, timeoutMs: number): Promise<Record<string, unknown>> {
  const cluster: Cluster = await startCluster({
    nodes: 3,
    store: 'postgres',
    leaseTtlMs: ttl,
    partitions: PARTITIONS,
    configIn: (scratch) => {
      const handler = path.join(scratch, 'handler.js');
      fs.writeFileSync(handler, handlerSource(path.join(scratch, 'side-effects.log')));
      return { handlers: { [TASK_TYPE]: handler }, leaseMs: attemptLeaseMs };
    },
    env: { REDIS_URL: process.env.REDIS_URL ?? '', LOG_LEVEL: 'warn' },
  });
  running = cluster;
  const log = path.join(cluster.scratch, 'side-effects.log');
  const db = new Client({ connectionString: cluster.db.env.POSTGRES_URL, options: `-c search_path=${cluster.db.name}` });
  await db.connect();
  try {
    await until('balanced', async () =>
      (await Promise.all(cluster.nodes.map((n) => ownedCount(n.svc)))).reduce((s, x) => s + x, 0) === PARTITIONS ? true : undefined,
    );
    const victim = cluster.nodes[2];
    const survivors = cluster.nodes.slice(0, 2);
    let targets = cluster.nodes.map((n) => n.svc.url);
    const t0 = Date.now();
    const submission = submitAll(() => targets, tasks);
    submission.catch(() => undefined);
    await until('a third of the side effects', async () => (lineCount(log) >= tasks / 3 ? true : undefined), timeoutMs, 20);
    targets = survivors.map((n) => n.svc.url);
    const before = await leasesOf(db);
    const lost = [...before].filter(([, l]) => l.owner === victim.memberId).map(([p]) => p);
    const victimPids = new Set([victim.svc.child.pid ?? -1, ...victim.svc.workerPids()]);
    const atEvent = lineCount(log);
    const eventAt = Date.now();
    if (mode === 'kill') {
      const workers = victim.svc.workerPids();
      await victim.svc.kill9();
      for (const pid of workers) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone with its parent */
        }
      }
    } else {
      victim.svc.child.kill('SIGSTOP');
    }
    // The victim's leases as it left them (it renews no more): they end at their expires_at.
    const atEvent2 = await leasesOf(db);
    const expiresAt = Math.max(...lost.map((p) => (atEvent2.get(p)?.owner === victim.memberId ? (atEvent2.get(p)?.expiresAt ?? 0) : 0)));
    const takeoverMs = await until(
      'lease take-over',
      async () => {
        const now = await leasesOf(db);
        return lost.every((p) => now.get(p)?.owner !== victim.memberId && (now.get(p)?.epoch ?? 0) > (before.get(p)?.epoch ?? 0))
          ? Date.now() - eventAt
          : undefined;
      },
      10 * ttl,
      20,
    );
    let owned: number[] = [];
    const ownersMs = await until(
      'survivors own every partition',
      async () => {
        owned = await Promise.all(survivors.map((n) => ownedCount(n.svc)));
        return owned.reduce((s, x) => s + x, 0) === PARTITIONS ? Date.now() - eventAt : undefined;
      },
      20 * ttl,
      20,
    ).catch((err: Error) => {
      throw new Error(`${err.message} (owned: ${owned.join(', ')})`);
    });
    const takenOver = await leasesOf(db);
    let contAt = 0;
    /** Lost partition → the time the victim was granted it again (first expires_at − TTL seen). */
    const regrants = new Map<number, number>();
    /** Lost partition → the epoch the victim was granted it again with. */
    const regrantEpochs = new Map<number, number>();
    let polling = false;
    let poller: Promise<void> = Promise.resolve();
    if (mode === 'stop') {
      // Frozen past its TTL: at least one TTL since the freeze, and its partitions re-owned.
      await until('one TTL frozen', async () => (Date.now() - eventAt >= ttl ? true : undefined), 2 * ttl, 50);
      polling = true;
      poller = (async () => {
        while (polling) {
          const now = await leasesOf(db);
          for (const p of lost) {
            const l = now.get(p);
            if (!regrants.has(p) && l?.owner === victim.memberId && l.epoch > (takenOver.get(p)?.epoch ?? 0)) {
              regrants.set(p, l.expiresAt - ttl);
              regrantEpochs.set(p, l.epoch);
            }
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      contAt = Date.now();
      victim.svc.child.kill('SIGCONT');
    }
    const ids = await submission;
    const submittedMs = Date.now() - t0;
    const drainStart = Date.now();
    await until(
      `${tasks} SUCCEEDED`,
      async () => ((await count(db, `SELECT count(*) AS n FROM tasks WHERE state = 'SUCCEEDED'`)) >= tasks ? true : undefined),
      timeoutMs,
      250,
    );
    const drainMs = Date.now() - drainStart;
    const totalMs = Date.now() - t0;
    polling = false;
    await poller;
    const succeeded = await count(db, `SELECT count(*) AS n FROM tasks WHERE state = 'SUCCEEDED'`);
    const stored = await count(db, 'SELECT count(*) AS n FROM tasks');
    // The attempts table holds a task's earlier attempts (its final one is the task row): a
    // success recorded there means a SUCCEEDED task ran (and completed) again.
    const successRows = await count(db, `SELECT count(DISTINCT task_id) AS n FROM attempts WHERE outcome = 'SUCCEEDED'`);
    const earlier = await count(db, 'SELECT count(*) AS n FROM attempts');
    const earlierNotLost = await count(db, `SELECT count(*) AS n FROM attempts WHERE error IS NULL OR error NOT LIKE '%worker_lost%'`);
    const { rows: finals } = await db.query<{ id: string; attempts: number }>('SELECT id, attempts FROM tasks');
    const finalOf = new Map(finals.map((r) => [r.id, r.attempts]));
    const { lines, torn } = readSideEffects(log) as unknown as { lines: Effect[]; torn: string[] };
    const finalLines = new Map<string, number>();
    const seenAttempt = new Set<string>();
    let reruns = 0;
    let rerunsByVictim = 0;
    let attemptRunTwice = 0;
    for (const l of lines) {
      const key = `${l.id}#${l.attempt}`;
      if (seenAttempt.has(key)) attemptRunTwice++;
      seenAttempt.add(key);
      if (l.attempt === finalOf.get(l.id)) finalLines.set(l.id, (finalLines.get(l.id) ?? 0) + 1);
      else {
        reruns++;
        if (l.member === victim.memberId) rerunsByVictim++;
      }
    }
    const finalTwice = [...finalLines.values()].filter((n) => n > 1).length;
    const withoutFinal = ids.filter((id) => !finalLines.has(id)).length;
    const out: Record<string, unknown> = {
      mode,
      tasks,
      redis: (process.env.REDIS_URL ?? '') !== '',
      lease_ttl_ms: ttl,
      attempt_lease_ms: attemptLeaseMs,
      victim: victim.memberId,
      partitions_lost: lost.length,
      side_effects_at_event: atEvent,
      takeover_ms: takeoverMs,
      takeover_within_ttl: takeoverMs <= ttl,
      /** When the victim's last lease expired, from the kill/freeze (≤ TTL: its last renewal preceded it). */
      leases_expired_after_event_ms: expiresAt > 0 ? expiresAt - eventAt : null,
      /** Take-over after that expiry: the survivors' reaction (wake at expiry, grant) plus the 20 ms poll. */
      takeover_after_expiry_ms: expiresAt > 0 ? takeoverMs - (expiresAt - eventAt) : null,
      owners_ms: ownersMs,
      submitted_ms: submittedMs,
      drain_after_submit_ms: drainMs,
      total_ms: totalMs,
      tasks_per_s: Math.round((tasks * 1000) / totalMs),
      stored,
      succeeded,
      side_effect_lines: lines.length,
      torn_lines: torn.length,
      completed_twice: successRows + finalTwice,
      tasks_without_final_run: withoutFinal,
      attempt_run_twice: attemptRunTwice,
      earlier_attempts: earlier,
      earlier_attempts_not_worker_lost: earlierNotLost,
      reruns,
      reruns_by_victim: rerunsByVictim,
    };
    let ok =
      succeeded === tasks && stored === tasks && successRows === 0 && finalTwice === 0 && withoutFinal === 0 && attemptRunTwice === 0;
    if (mode === 'stop') {
      const afterCont = lines.filter((l) => victimPids.has(l.pid) || l.member === victim.memberId).filter((l) => l.start >= contAt);
      const lostSet = new Set(lost);
      const onLost = afterCont.filter((l) => lostSet.has(partitionOf(l.id, PARTITIONS)));
      // A victim run after SIGCONT on a partition it lost is legitimate only when it is the task's
      // final attempt claimed under the epoch the victim was granted again (the store checks that
      // epoch at the claim: the task row's owner_epoch). Anything else ran under a lost lease.
      const { rows: claimRows } = await db.query<{ id: string; attempts: number; owner_epoch: string; partition: number }>(
        'SELECT id, attempts, owner_epoch, partition FROM tasks WHERE id = ANY($1::text[])',
        [onLost.map((l) => l.id)],
      );
      const claimOf = new Map(claimRows.map((r) => [r.id, r]));
      const early = onLost.filter((l) => {
        const row = claimOf.get(l.id);
        const epoch = regrantEpochs.get(partitionOf(l.id, PARTITIONS));
        return !(row && epoch !== undefined && row.attempts === l.attempt && Number(row.owner_epoch) === epoch);
      });
      const beforeRegrantSeen = onLost.filter((l) => {
        const g = regrants.get(partitionOf(l.id, PARTITIONS));
        return g === undefined || l.start < g;
      }).length;
      if (early.length > 0)
        process.stderr.write(
          `[bench-failover] runs under a lost lease: ${JSON.stringify(early.slice(0, 5).map((l) => ({ ...l, start: l.start - contAt, final: claimOf.get(l.id)?.attempts, owner_epoch: claimOf.get(l.id)?.owner_epoch, regrant_epoch: regrantEpochs.get(partitionOf(l.id, PARTITIONS)), regrant_seen: (regrants.get(partitionOf(l.id, PARTITIONS)) ?? 0) - contAt })))}\n`,
        );
      const losses = await Promise.all(
        [victim].map(async (n) => {
          const body = await (await fetch(`${n.svc.url}/metrics`)).text();
          const m = /^scheduler_lease_losses_total(?:\{[^}]*\})? (\d+)/m.exec(body);
          return m ? Number(m[1]) : 0;
        }),
      );
      // The claims behind those runs: before the freeze (answered after SIGCONT) or after it.
      const { rows: claims } = await db.query<{ id: string; started_at: string; owner_epoch: string; partition: number }>(
        'SELECT id, started_at, owner_epoch, partition FROM tasks WHERE id = ANY($1::text[])',
        [early.map((l) => l.id)],
      );
      const claimedBeforeFreeze = claims.filter((r) => Number(r.started_at) < eventAt).length;
      const staleEpoch = claims.filter((r) => Number(r.owner_epoch) <= (before.get(r.partition)?.epoch ?? 0)).length;
      Object.assign(out, {
        early_claimed_before_freeze: claimedBeforeFreeze,
        early_claimed_after_cont: claims.filter((r) => Number(r.started_at) >= contAt).length,
        early_with_stale_epoch: staleEpoch,
        frozen_ms: contAt - eventAt,
        victim_lease_losses: losses[0],
        victim_runs_after_cont: afterCont.length,
        victim_runs_after_cont_on_lost_regained: onLost.length - early.length,
        /** Of the runs on lost partitions, those started before the regrant was seen (expires_at − TTL of its first reading): a timing view. */
        victim_runs_before_regrant_seen: beforeRegrantSeen,
        victim_dispatches_after_cont_lost: early.length,
        regained: regrants.size,
      });
      ok = ok && early.length === 0;
    }
    out.ok = ok;
    return out;
  } finally {
    await db.end();
    await cluster.stop();
    running = null;
  }
}

/** The cluster of the run in progress: a SIGINT/SIGTERM of the benchmark kills its processes. */
let running: Cluster | null = null;

async function main(): Promise<number> {
  const reap = () => {
    for (const node of running?.nodes ?? []) {
      for (const pid of [...node.svc.workerPids(), node.svc.child.pid ?? 0]) {
        try {
          if (pid > 0) process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
    process.exit(130);
  };
  process.once('SIGINT', reap);
  process.once('SIGTERM', reap);
  const { values } = parseArgs({
    options: {
      tasks: { type: 'string', default: '50000' },
      runs: { type: 'string', default: '5' },
      mode: { type: 'string', default: 'both' },
      'lease-ttl-ms': { type: 'string', default: '6000' },
      'attempt-lease-ms': { type: 'string', default: '5000' },
      timeout: { type: 'string', default: '900' },
    },
  });
  const [tasks, runs, ttl, attemptLeaseMs] = [values.tasks, values.runs, values['lease-ttl-ms'], values['attempt-lease-ms']].map(Number);
  const timeoutMs = Number(values.timeout) * 1000;
  const modes: Mode[] = values.mode === 'both' ? ['kill', 'stop'] : [values.mode as Mode];
  if (
    ![tasks, runs, ttl, attemptLeaseMs, timeoutMs].every((n) => Number.isInteger(n) && n > 0) ||
    !modes.every((m) => m === 'kill' || m === 'stop')
  ) {
    process.stderr.write('--tasks, --runs, --lease-ttl-ms, --attempt-lease-ms, --timeout: positive integers; --mode kill|stop|both\n');
    return 2;
  }
  const missing = clusterStoreMissing('postgres');
  if (missing) {
    process.stderr.write(`bench-failover ${missing}\n`);
    return 2;
  }
  const results: Array<Record<string, unknown>> = [];
  const out = path.resolve(__dirname, '..', '..', 'load-tests', 'results');
  fs.mkdirSync(out, { recursive: true });
  for (const mode of modes) {
    for (let i = 1; i <= runs; i++) {
      const r: Record<string, any> = { run: i, ...(await run(mode, tasks, ttl, attemptLeaseMs, timeoutMs)) };
      results.push(r);
      process.stderr.write(
        `[bench-failover] ${mode} run ${i}/${runs}: take-over ${r.takeover_ms} ms (TTL ${ttl}), owners ${r.owners_ms} ms; ` +
          `${r.succeeded}/${tasks} SUCCEEDED in ${r.total_ms} ms (${r.tasks_per_s}/s); ${r.side_effect_lines} side effects, ` +
          `completed twice ${r.completed_twice}, re-runs ${r.reruns} (${r.reruns_by_victim} by the victim)` +
          (mode === 'stop'
            ? `; frozen ${r.frozen_ms} ms, victim runs after SIGCONT on lost partitions before regrant: ${r.victim_dispatches_after_cont_lost}`
            : '') +
          (r.ok ? '' : ' — FAILED') +
          '\n',
      );
      process.stdout.write(`${JSON.stringify(r)}\n`);
      fs.writeFileSync(
        path.join(out, 'failover-latest.json'),
        JSON.stringify({ at: new Date().toISOString(), machine: machineInfo(), results }, null, 2),
      );
    }
  }
  return results.every((r) => r.ok) ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`bench-failover failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
