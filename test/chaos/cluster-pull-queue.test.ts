/**
 * Pull queues across the members of a cluster (docs/CLUSTER.md "Pull queues"). Three service
 * processes on one PostgreSQL schema; tasks of a pull queue are spread over every partition, and
 * one HTTP pull worker talks to one member only. That member asks the others for what it has not
 * got (`pull`), their owners grant it tasks of their partitions, it claims them for the worker.
 * Before, the worker got only its member's share (measured 2026-12-06: 8 of 24 leased, 16 left
 * PENDING). Asserts: every task is leased by the one worker, each exactly once, and ends
 * SUCCEEDED; with long polls (`wait_s` 2), then with no wait (`wait_s` 0: the member asks the
 * others for up to 200 ms; before, such a worker never got the others' tasks). Over LISTEN/NOTIFY
 * (no Redis), and over Redis pub/sub when `REDIS_URL` is set.
 */
import { expect } from 'chai';
import { http } from '../helpers/http';
import { Cluster, memberWarnings, startCluster, until } from '../helpers/cluster-processes';
import { describeEachClusterStore } from '../helpers/cluster-store';

const TOTAL = 30;
const QUEUE = 'pulled';

describeEachClusterStore(
  'cluster: one pull worker on one member gets the tasks of every partition',
  function (store) {
    this.timeout(120_000);
    const buses: Array<{ name: string; env: Record<string, string> }> = [{ name: 'LISTEN/NOTIFY', env: {} }];
    if (process.env.REDIS_URL) buses.push({ name: 'Redis pub/sub', env: { REDIS_URL: process.env.REDIS_URL } });

    for (const bus of buses) {
      describe(`over ${bus.name}`, () => {
        let cluster: Cluster | null = null;
        after(async () => {
          await cluster?.stop();
        });

        it(`${TOTAL} tasks of a pull queue on 12 partitions of 3 members: a worker leasing from member-0 alone gets each once`, async () => {
          cluster = await startCluster({
            store,
            nodes: 3,
            partitions: 12,
            leaseTtlMs: 6000,
            env: bus.env,
            config: { externalQueues: { [QUEUE]: { transport: 'http', leaseMs: 30_000, maxInFlight: 100 } } },
          });
          await submitAndDrain(cluster, 2);
        });

        it(`${TOTAL} more, leased from member-0 with wait_s 0: it asks the other members briefly, and gets each once`, async () => {
          if (!cluster) throw new Error('the cluster did not start');
          await submitAndDrain(cluster, 0);
        });
      });
    }
  },
  ['postgres'],
);

/**
 * Submits {@link TOTAL} tasks round robin over the members, then leases (`max` 5, `wait_s` `waitS`)
 * and completes them from member-0 alone until every one was leased; asserts each was leased
 * once and ended SUCCEEDED.
 */
async function submitAndDrain(c: Cluster, waitS: number): Promise<void> {
  const ids: string[] = [];
  for (let i = 0; i < TOTAL; i++) {
    const node = c.nodes[i % 3];
    const res = await http('POST', `${node.svc.url}/api/v1/tasks`, { task_type: 'resize', queue: QUEUE, payload: { n: i } });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    ids.push(res.body.task_id as string);
  }
  const leased = new Map<string, number>();
  const target = c.nodes[0].svc.url;
  await until(
    'the worker on member-0 leased every task',
    async () => {
      const res = await http('POST', `${target}/api/v1/queues/${QUEUE}/lease`, { worker_id: 'only-worker', max: 5, wait_s: waitS });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      for (const t of res.body.tasks as Array<{ task_id: string; attempt: number }>) {
        leased.set(t.task_id, (leased.get(t.task_id) ?? 0) + 1);
        const done = await http('POST', `${target}/api/v1/tasks/${t.task_id}/complete`, {
          attempt: t.attempt,
          result: { ok: true },
        });
        expect(done.status, JSON.stringify(done.body)).to.equal(200);
      }
      return leased.size >= TOTAL ? true : undefined;
    },
    60_000,
    0,
  ).catch((err: Error) => {
    throw new Error(`${err.message}: ${leased.size} of ${TOTAL} leased\n${memberWarnings(c.nodes)}`);
  });
  expect([...leased.keys()].sort()).to.deep.equal([...ids].sort());
  expect(
    [...leased.values()].every((n) => n === 1),
    'no task leased twice',
  ).to.equal(true);
  for (const id of ids) {
    const res = await http('GET', `${c.nodes[1].svc.url}/api/v1/tasks/${id}`);
    expect(res.body.status ?? res.body.state, id).to.equal('SUCCEEDED');
  }
}
