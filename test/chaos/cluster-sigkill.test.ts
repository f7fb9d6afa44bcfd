/**
 * Issue 7, must-show 2: three service processes on one MongoDB database (FerretDB in CI) and,
 * as a second suite, on one PostgreSQL schema (every store whose server is named,
 * test/helpers/cluster-store.ts); tasks
 * submitted round-robin across all three; one member SIGKILLed (with its worker processes, as in
 * a machine crash) while they run. Every task reaches SUCCEEDED, none is completed twice, and the
 * dead member's partitions are owned again by the survivors within the lease TTL (plus the time
 * of the acquiring writes). The 20,000 tasks run in `npm run bench:cluster`
 * (load-tests/bench-cluster.ts); here CLUSTER_CHAOS_TASKS (default 150 on PostgreSQL, 45 on FerretDB:
 * clusterTestTasks) keeps it under a minute
 * on FerretDB (single-digit to tens of tasks/s for the whole cluster there: every compare-and-set scans the collection, see docs/MONGODB.md; MongoDB uses the _id index). Skipped without the chosen store's server.
 *
 * What "none twice" means: at-least-once execution is the contract, and a member killed after a
 * handler's side effect but before its completion was stored legitimately runs that task again
 * (the attempt-lease sweeper records the lost attempt, the retry runs on a survivor). So the test
 * asserts, from the side-effect log (one line per handler run that returned: task id, attempt,
 * member) against the store:
 * - exactly one SUCCEEDED completion per task: the stored task is SUCCEEDED, and its final attempt
 *   (attempt = stored `attempts`) has exactly one side-effect line;
 * - no attempt ran twice (no duplicate (id, attempt) line): one claim per attempt, even across
 *   the take-over (two owners or two claims of one attempt would show here);
 * - every earlier attempt of a task that ran more than once ended `worker_lost` in the stored
 *   history (its attempt lease expired: the killed member's runs, or, on FerretDB under load, a
 *   live member's attempt whose heartbeat writes lagged past `leaseMs`), never a second success.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { http } from '../helpers/http';
import { countLines, isAlive } from '../helpers/process-files';
import {
  Cluster,
  ClusterNode,
  listByStatus,
  metricSum,
  ownedCount,
  readSideEffects,
  sideEffectHandlerSource,
  startCluster,
  until,
  untilBalanced,
} from '../helpers/cluster-processes';
import { clusterTestTasks, describeEachClusterStore } from '../helpers/cluster-store';

const TASK_TYPE = 'cluster_side_effect';
/** Tasks per run (CLUSTER_CHAOS_TASKS overrides; on FerretDB a third, see clusterTestTasks). */
const TOTAL_TASKS = process.env.CLUSTER_CHAOS_TASKS;
const BATCH = 25;
/**
 * Lease TTL (ms). 6 s, not 3 s: on FerretDB under this load a renewal round (heartbeat, member list,
 * one compare-and-set per lease) can take over a second, and with 3 s (deadline 2.4 s after the
 * last renewal was sent) members dropped their own leases and churned.
 */
const TTL = 6000;

describeEachClusterStore('cluster chaos: SIGKILL of one of three members under load (issue 7)', function (store) {
  // Above the sum of the stated bounds below (start, a third of the side effects, take-over,
  // owners, drain), so a slow run fails on the bound it broke, with its name, not on mocha's timer.
  this.timeout(300_000);
  let cluster: Cluster | null = null;
  const TOTAL = TOTAL_TASKS ? Number(TOTAL_TASKS) : clusterTestTasks(store, 150);

  after(async () => {
    await cluster?.stop();
  });

  it(`${TOTAL} tasks round-robin over three members, one SIGKILLed mid-run: all SUCCEEDED, one completion each, partitions re-owned within the TTL`, async () => {
    cluster = await startCluster({
      store,
      nodes: 3,
      leaseTtlMs: TTL,
      partitions: 12,
      // horizonMs 2 s: a task submitted on a non-owner is found by its owner's window read within 1 s
      // (no cross-member wake-up without Redis); leaseMs 3 s: a dead member's running attempts are
      // recovered by the attempt-lease sweeper within about 3 s.
      configIn: (scratch) => {
        const handler = path.join(scratch, 'handler.js');
        fs.writeFileSync(handler, sideEffectHandlerSource(path.join(scratch, 'side-effects.log'), 2));
        return { handlers: { [TASK_TYPE]: handler }, horizonMs: 2000, leaseMs: 3000, workers: 1 };
      },
    });
    const c = cluster;
    const log = path.join(c.scratch, 'side-effects.log');
    await untilBalanced(c.nodes, c.partitions);

    const t0 = Date.now();
    const acked: string[] = [];
    for (let b = 0; b * BATCH < TOTAL; b++) {
      const node = c.nodes[b % c.nodes.length];
      const tasks = Array.from({ length: Math.min(BATCH, TOTAL - b * BATCH) }, (_, i) => ({
        task_type: TASK_TYPE,
        payload: { n: b * BATCH + i },
      }));
      const res = await http('POST', `${node.svc.url}/api/v1/tasks/batch`, { tasks });
      expect(res.status, JSON.stringify(res.body)).to.equal(202);
      acked.push(...res.body.tasks.map((t: { task_id: string }) => t.task_id));
    }
    expect(new Set(acked).size).to.equal(TOTAL);
    const submittedAt = Date.now();

    // Kill the last member once a third of the side effects happened (work is in flight everywhere).
    await until('a third of the side effects', async () => (countLines(log) >= TOTAL / 3 ? true : undefined), 60_000, 20);
    const victim = c.nodes[2];
    const survivors = c.nodes.filter((n) => n !== victim);
    const before = await c.db.readLeases();
    const victimPartitions = [...before].filter(([, l]) => l.owner === victim.memberId).map(([p]) => p);
    expect(victimPartitions.length, 'the victim owned partitions').to.be.greaterThan(0);
    const workers = victim.svc.workerPids();
    const linesAtKill = countLines(log);
    const killedAt = Date.now();
    console.log(
      `    [cluster-sigkill] submitted in ${submittedAt - t0} ms; ${linesAtKill} side effects ${killedAt - submittedAt} ms later: SIGKILL ${victim.memberId}`,
    );
    await victim.svc.kill9();
    for (const pid of workers.filter(isAlive)) process.kill(pid, 'SIGKILL'); // a crash takes the workers too
    // Lease take-over, as the store sees it: every partition of the victim granted to a survivor
    // under a new epoch (polled on the lease documents).
    const takeoverMs = await until(
      "the victim's partitions granted to survivors",
      async () => {
        const now = await c.db.readLeases();
        const moved = victimPartitions.every((p) => {
          const l = now.get(p);
          return l !== undefined && l.owner !== victim.memberId && l.epoch > (before.get(p)?.epoch ?? Infinity) && l.expiresAt > Date.now();
        });
        return moved ? Date.now() - killedAt : undefined;
      },
      4 * TTL,
      20,
    );
    // Owners running again: the survivors report every partition owned (grant, fence, owner start).
    const failoverMs = await until(
      'the survivors own every partition',
      async () => {
        const counts = await Promise.all(survivors.map((n: ClusterNode) => ownedCount(n.svc)));
        return counts.reduce((s, x) => s + x, 0) === c.partitions ? Date.now() - killedAt : undefined;
      },
      6 * TTL,
      20,
    );
    const after = await c.db.readLeases();
    for (const p of victimPartitions)
      expect(
        survivors.map((n) => n.memberId),
        `partition ${p} re-owned`,
      ).to.include(after.get(p)?.owner);
    // The victim's record and leases expire one TTL after its last round (≤ the kill); survivors
    // wake at that instant (PartitionLeases) and acquire. Half a TTL of slack for the polling and
    // FerretDB's latency under load (a round's writes took up to 1.5 s there in full-suite runs).
    expect(takeoverMs, 'lease take-over time').to.be.at.most(TTL * 1.5);

    const drainStart = Date.now();
    await until(
      'every task SUCCEEDED',
      async () => {
        const n = await metricSum(survivors[0].svc, 'scheduler_tasks\\{state="SUCCEEDED"\\}');
        return n >= TOTAL ? true : undefined;
      },
      90_000,
      250,
    );
    const drainMs = Date.now() - drainStart;

    const succeeded = await listByStatus(survivors[0].svc.url, 'SUCCEEDED', TASK_TYPE);
    expect(
      acked.filter((id) => !succeeded.has(id)),
      'tasks not SUCCEEDED',
    ).to.deep.equal([]);
    const { lines, torn } = readSideEffects(log);
    const byTask = new Map<string, typeof lines>();
    for (const l of lines) byTask.set(l.id, [...(byTask.get(l.id) ?? []), l]);
    const problems: unknown[] = [];
    let reRuns = 0;
    let reRunsOnVictim = 0;
    const retried: string[] = [];
    for (const id of acked) {
      const runs = byTask.get(id) ?? [];
      const attempts = succeeded.get(id) as number;
      const final = runs.filter((r) => r.attempt === attempts);
      const extra = runs.filter((r) => r.attempt !== attempts);
      reRuns += extra.length;
      reRunsOnVictim += extra.filter((r) => r.member === victim.memberId).length;
      if (attempts > 1) retried.push(id);
      const attemptSet = new Set(runs.map((r) => r.attempt));
      if (final.length !== 1 || attemptSet.size !== runs.length) problems.push({ id, attempts, runs });
    }
    for (const id of retried) {
      const t = (await http('GET', `${survivors[0].svc.url}/api/v1/tasks/${id}?include=attempts`)).body;
      const earlier = t.attempt_history.slice(0, -1);
      const last = t.attempt_history[t.attempt_history.length - 1];
      if (!earlier.every((a: any) => a.error?.type === 'worker_lost') || last.outcome !== 'SUCCEEDED' || last.attempt !== t.attempts) {
        problems.push({ id, history: t.attempt_history });
      }
    }
    console.log(
      `    [cluster-sigkill] ${TOTAL} tasks; killed ${victim.memberId} (${victimPartitions.length}/${c.partitions} partitions) at ${linesAtKill} side effects; ` +
        `leases taken over ${takeoverMs} ms and owners running ${failoverMs} ms after the kill (TTL ${TTL} ms); drained in ${drainMs} ms; ` +
        `${succeeded.size} SUCCEEDED, ${lines.length} side-effect lines, ${retried.length} tasks retried (earlier attempts worker_lost), ${reRuns} extra runs (${reRunsOnVictim} on the killed member), ${torn.length} torn lines`,
    );
    expect(problems.slice(0, 5), `${problems.length} tasks without exactly one successful completion`).to.deep.equal([]);
  });
});
