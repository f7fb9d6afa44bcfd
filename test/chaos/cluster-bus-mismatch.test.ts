/**
 * Members of one cluster on different buses (docs/CLUSTER.md "One bus for every member"): two
 * service processes on one PostgreSQL schema, member-1 started with `REDIS_URL` (Redis pub/sub),
 * member-0 without (LISTEN/NOTIFY), as midway through a rolling change that adds Redis. They do
 * not hear one another; each records its bus with its heartbeat and the other sees it. Asserts:
 * both count one member on another bus (`scheduler_cluster_members_on_other_bus`) and log the
 * warning once. Needs `REDIS_URL` (CI sets it).
 */
import { expect } from 'chai';
import { Cluster, metricSum, startCluster, until } from '../helpers/cluster-processes';
import { describeEachClusterStore } from '../helpers/cluster-store';

const WARNING = 'members of this cluster use another bus';

describeEachClusterStore(
  'cluster: members on different buses see it',
  function (store) {
    this.timeout(90_000);
    let cluster: Cluster | null = null;
    after(async () => {
      await cluster?.stop();
    });

    it('a member with REDIS_URL beside one without: each counts the other as on another bus and warns once', async function () {
      const redisUrl = process.env.REDIS_URL;
      if (!redisUrl) this.skip();
      cluster = await startCluster({
        store,
        nodes: 2,
        partitions: 4,
        leaseTtlMs: 3000,
        envOf: (i): Record<string, string> => (i === 1 ? { REDIS_URL: redisUrl as string } : {}),
      });
      const c = cluster;
      await until(
        'both members count one member on another bus',
        async () => {
          const counts = await Promise.all(c.nodes.map((n) => metricSum(n.svc, 'scheduler_cluster_members_on_other_bus')));
          return counts.every((n) => n === 1) ? true : undefined;
        },
        30_000,
        100,
      );
      await until(
        'both members logged the warning',
        async () => (c.nodes.every((n) => n.svc.output().includes(WARNING)) ? true : undefined),
        10_000,
        100,
      );
      // A few more rounds (every leaseTtlMs / 3): still one warning each.
      const rounds = await metricSum(c.nodes[0].svc, 'scheduler_lease_renewals_total');
      await until(
        'member-0 renewed six more leases (three rounds or more)',
        async () => ((await metricSum(c.nodes[0].svc, 'scheduler_lease_renewals_total')) >= rounds + 6 ? true : undefined),
        20_000,
        100,
      );
      for (const n of c.nodes) {
        const lines = n.svc
          .output()
          .split('\n')
          .filter((l) => l.includes(WARNING));
        expect(lines, n.memberId).to.have.length(1);
        expect(JSON.parse(lines[0])).to.deep.include({ member_id: n.memberId, bus: n.memberId === 'member-1' ? 'redis' : 'postgres' });
      }
    });
  },
  ['postgres'],
);
