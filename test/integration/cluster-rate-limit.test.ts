/**
 * Issue 7, must-show 5: a task-type rate limit holds across three service processes that share one
 * Redis, where the token bucket lives (Lua scripts, leased in batches). `send_email` is limited to
 * 100/s with a burst of 10; 1,200 tasks are submitted, a third to each node, so every node has work
 * for the whole run (about 12 s at the limit). Each node keeps its tasks in its own SQLite file:
 * the limit is Redis's job whatever the store, and FerretDB (CI's MongoDB stand-in) runs its
 * SQLite backend at full CPU well below 100 tasks/s on this machine, which would make the limit
 * vacuous. The MongoDB-store cluster runs the same dispatcher and buckets.
 *
 * The bound checked is the one the Redis bucket promises (docs/CLUSTER.md, "Coordination
 * through Redis"): over any window of T seconds at most burst + rate × T starts, plus one
 * leased batch per node (≤ 10 tokens here). This is an upper bound on starts (the limit holding),
 * not a speed assertion; the achieved rate is printed for the record. start times are `started_at`
 * of each task, stamped by each node on the Redis server's clock (one time source).
 * Skipped without REDIS_URL.
 *
 * The same on PostgreSQL (issue 32, must-show 7; every cluster store whose server is named, see
 * test/helpers/cluster-store.ts; PostgreSQL only here, the FerretDB-backed store being too slow
 * to reach the limit): three nodes in cluster mode on one schema, first with Redis (the same bound),
 * then without it, where each node applies the limit alone (docs/CLUSTER.md, "Still needs Redis"):
 * the documented looser bound is N × (rate + burst) starts in any 1 s window and
 * N × (burst + rate × T) over the run.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { http } from '../helpers/http';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';
import { Cluster, startCluster, until, untilBalanced } from '../helpers/cluster-processes';
import { describeEachClusterStore } from '../helpers/cluster-store';

const redisUrl = process.env.REDIS_URL;
const NODES = 3;
const TASKS = 1200;
const RATE = 100;
const BURST = 10;
/** One leased batch per node: a lease is ~100 ms of the rate, at most the burst. */
const SLACK_PER_NODE = Math.min(BURST, Math.ceil(RATE / 10));

async function completed(svc: ServiceProcess): Promise<number> {
  const body = await (await fetch(`${svc.url}/metrics`)).text();
  const m = /^scheduler_tasks_completed_total\{task_type="send_email",status="SUCCEEDED"\} (\d+)/m.exec(body);
  return m ? Number(m[1]) : 0;
}

/** Every task's `started_at` (epoch ms, ascending), read through the node that took it; each SUCCEEDED once. */
async function startTimes(ids: Array<{ id: string; svc: { url: string } }>): Promise<number[]> {
  const starts: number[] = [];
  for (let i = 0; i < ids.length; i += 50) {
    const page = await Promise.all(ids.slice(i, i + 50).map((t) => http('GET', `${t.svc.url}/api/v1/tasks/${t.id}`)));
    for (const r of page) {
      expect(r.body.status).to.equal('SUCCEEDED');
      expect(r.body.attempts, `${r.body.task_id} ran more than once`).to.equal(1);
      starts.push(Date.parse(r.body.started_at));
    }
  }
  return starts.sort((a, b) => a - b);
}

/** Submits TASKS `send_email` tasks, a third to each of `urls`, in batches of 200. */
async function submitThirds(urls: string[]): Promise<Array<{ id: string; svc: { url: string } }>> {
  const ids: Array<{ id: string; svc: { url: string } }> = [];
  const perNode = TASKS / urls.length;
  await Promise.all(
    urls.map(async (url) => {
      for (let sent = 0; sent < perNode; sent += 200) {
        const tasks = Array.from({ length: Math.min(200, perNode - sent) }, () => ({ task_type: 'send_email' }));
        const r = await http('POST', `${url}/api/v1/tasks/batch`, { tasks });
        expect(r.status, JSON.stringify(r.body)).to.equal(202);
        ids.push(...(r.body.tasks as Array<{ task_id: string }>).map((t) => ({ id: t.task_id, svc: { url } })));
      }
    }),
  );
  expect(ids).to.have.length(TASKS);
  return ids;
}

/** Most starts inside any window [t, t + windowMs) (sorted start times, two pointers). */
function maxInWindow(sorted: number[], windowMs: number): number {
  let best = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j] - sorted[i] >= windowMs) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

describe('a rate limit of 100/s holds across three nodes sharing one Redis token bucket', function () {
  this.timeout(180_000);
  if (!redisUrl) {
    it.skip('needs REDIS_URL (`source .ci/services.sh` starts Redis)', () => undefined);
    return;
  }
  const dir = tempDir();
  const nodes: ServiceProcess[] = [];

  after(async () => {
    await Promise.all(nodes.map((n) => n.stop()));
    dir.remove();
  });

  it('no 1 s window holds more than rate + burst + one leased batch per node; every task succeeds', async () => {
    const handler = path.join(dir.path, 'send-email.js');
    fs.writeFileSync(handler, 'module.exports = async () => ({ sent: true });\n');
    const config = path.join(dir.path, 'cluster.json');
    fs.writeFileSync(
      config,
      JSON.stringify({ handlers: { send_email: handler }, rateLimits: { send_email: { ratePerSecond: RATE, burst: BURST } } }),
    );
    for (let n = 0; n < NODES; n++) {
      fs.mkdirSync(path.join(dir.path, `n${n}`));
      nodes.push(
        await startServiceProcess(path.join(dir.path, `n${n}`), {
          REDIS_URL: redisUrl,
          WORKERS: '1',
          SCHEDULER_CONFIG: config,
        }),
      );
    }

    const ids = await submitThirds(nodes.map((n) => n.url));

    const deadline = Date.now() + 120_000;
    for (;;) {
      const done = (await Promise.all(nodes.map(completed))).reduce((a, b) => a + b, 0);
      if (done >= TASKS) break;
      if (Date.now() > deadline) throw new Error(`only ${done} of ${TASKS} tasks succeeded`);
      await new Promise((r) => setTimeout(r, 200)); // polling for completions, not timing logic
    }

    const starts = await startTimes(ids);
    const worst1s = maxInWindow(starts, 1000);
    const span = (starts[starts.length - 1] - starts[0]) / 1000;
    const bound = RATE + BURST + NODES * SLACK_PER_NODE;
    const tenSeconds = starts.filter((t) => t < starts[0] + 10_000).length;
    console.log(
      `      rate limit across ${NODES} nodes: ${TASKS} starts in ${span.toFixed(2)} s (${(TASKS / span).toFixed(1)}/s), ` +
        `${tenSeconds} in the first 10 s, most in any 1 s window ${worst1s} (bound ${bound})`,
    );
    expect(worst1s).to.be.at.most(bound);
    // Over the whole run the limit holds too: burst + rate × span + one batch per node.
    expect(TASKS).to.be.at.most(BURST + RATE * span + NODES * SLACK_PER_NODE);
  });
});

// PostgreSQL only: the FerretDB-backed MongoDB store runs well below 100 tasks/s on CI's machine,
// so the limit would hold vacuously there (its Redis bucket is the one checked above on SQLite nodes).
describeEachClusterStore(
  'a rate limit of 100/s across three cluster nodes on one store',
  function (store) {
    this.timeout(180_000);
    let cluster: Cluster | null = null;

    afterEach(async () => {
      await cluster?.stop();
      cluster = null;
    });

    /** Runs TASKS limited tasks on a fresh 3-node cluster; resolves with the sorted start times. */
    async function runLimited(redis: string | null): Promise<number[]> {
      cluster = await startCluster({
        store,
        nodes: NODES,
        partitions: 12,
        configIn: (scratch) => {
          const handler = path.join(scratch, 'send-email.js');
          fs.writeFileSync(handler, 'module.exports = async () => ({ sent: true });\n');
          return { handlers: { send_email: handler }, rateLimits: { send_email: { ratePerSecond: RATE, burst: BURST } }, workers: 1 };
        },
        env: redis ? { REDIS_URL: redis } : {},
      });
      const c = cluster;
      await untilBalanced(c.nodes, c.partitions);
      const ids = await submitThirds(c.nodes.map((n) => n.svc.url));
      const reader = await c.db.connect();
      try {
        await until(`${TASKS} SUCCEEDED`, async () => ((await reader.countTasks('SUCCEEDED')) >= TASKS ? true : undefined), 120_000, 200);
      } finally {
        await reader.close();
      }
      return startTimes(ids);
    }

    function report(what: string, starts: number[], bound1s: number): { worst1s: number; span: number } {
      const worst1s = maxInWindow(starts, 1000);
      const span = (starts[starts.length - 1] - starts[0]) / 1000;
      console.log(
        `      ${what}: ${TASKS} starts in ${span.toFixed(2)} s (${(TASKS / span).toFixed(1)}/s), most in any 1 s window ${worst1s} (bound ${bound1s})`,
      );
      return { worst1s, span };
    }

    it('with Redis: no 1 s window holds more than rate + burst + one leased batch per node', async function () {
      if (!redisUrl) {
        if (process.env.CI) throw new Error('CI is set but REDIS_URL is not');
        this.skip();
      }
      const starts = await runLimited(redisUrl as string);
      const bound = RATE + BURST + NODES * SLACK_PER_NODE;
      const { worst1s, span } = report(`${store} + Redis, ${NODES} nodes`, starts, bound);
      expect(worst1s).to.be.at.most(bound);
      expect(TASKS).to.be.at.most(BURST + RATE * span + NODES * SLACK_PER_NODE);
    });

    // A start time is when the claim's write ran, a little after the tokens were taken: batches
    // that waited in the group commit can land closer together than their tokens were taken, so
    // each node gets the same slack of one batch as with Redis.
    it('without Redis: each node applies the limit alone, so at most N × (rate + burst + one batch) in any 1 s window', async () => {
      const starts = await runLimited(null);
      const bound = NODES * (RATE + BURST + SLACK_PER_NODE);
      const { worst1s, span } = report(`${store} without Redis, ${NODES} nodes`, starts, bound);
      expect(worst1s).to.be.at.most(bound);
      expect(TASKS).to.be.at.most(NODES * (BURST + RATE * span + SLACK_PER_NODE));
    });
  },
  ['postgres'],
);
