/**
 * fireCrons on PostgreSQL with several nodes: three PostgresStore instances (three pools, three
 * group-commit connections) on one schema fire the same cron at the same instant, again and
 * again. Exactly one firing applies per fire time, and each fire time has exactly one instance
 * and one fire record — also when an edit moves the definition back to fire times already fired.
 * Edits merged into one version by several nodes (`ifVersion`): one applies.
 * Needs POSTGRES_URL (skipped without it, as the conformance file is).
 */
import { expect } from 'chai';
import { cronInstanceId, CronRecord } from '../../src/domain/cron/cron-definition';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { CronFiring } from '../../src/storage/cron-store';
import { dropSchema, freshSchema, postgresUrl, withClient } from '../helpers/postgres-schema';
import { cronRecord, firing } from './conformance/cron';
import { PARTITIONS, T0 } from './fixtures';

const SEC = 1000;
const NODES = 3;
const ROUNDS = 40;
const url = postgresUrl();

(url ? describe : describe.skip)('PostgreSQL fireCrons: three nodes, one cron, one instant', () => {
  let schema: string;
  let nodes: PostgresStore[] = [];

  beforeEach(async () => {
    schema = freshSchema('cron_race');
    nodes = [];
    // Opened one after another: the first creates the schema, the others find it.
    for (let i = 0; i < NODES; i++) {
      const store = new PostgresStore(url as string, { schema, poolSize: 3 });
      await store.open(PARTITIONS);
      nodes.push(store);
    }
  });

  afterEach(async () => {
    await Promise.all(nodes.map((n) => n.close()));
    await dropSchema(url as string, schema);
  });

  /** Per fire time of cron `cronId`: how many instances and how many fire records exist. */
  async function countsPerFireTime(cronId: string): Promise<{ instances: Map<number, number>; records: Map<number, number> }> {
    return withClient(url as string, schema, async (c) => {
      const tasks = await c.query<{ due_at: string; n: string }>(
        `SELECT due_at, COUNT(*) AS n FROM tasks WHERE cron_id = $1 GROUP BY due_at`,
        [cronId],
      );
      const fires = await c.query<{ fire_time: string; n: string }>(
        `SELECT fire_time, COUNT(*) AS n FROM cron_fires WHERE cron_id = $1 GROUP BY fire_time`,
        [cronId],
      );
      return {
        instances: new Map(tasks.rows.map((r) => [Number(r.due_at), Number(r.n)])),
        records: new Map(fires.rows.map((r) => [Number(r.fire_time), Number(r.n)])),
      };
    });
  }

  /** Every node reads the cron, then all fire the same planned instant at once. @returns how many applied */
  async function race(cronId: string, fireTimes: (cron: CronRecord) => number[]): Promise<number> {
    const views = await Promise.all(nodes.map((n) => n.getCron(cronId)));
    const plans: CronFiring[] = views.map((cron) => {
      if (!cron) throw new Error(`cron ${cronId} is gone`);
      return firing(cron, fireTimes(cron));
    });
    const results = await Promise.all(nodes.map((n, i) => n.fireCrons([plans[i]], plans[i].instances[0].fireTime + 5)));
    return results.filter(([r]) => r.applied).length;
  }

  it(`${ROUNDS} instants fired by ${NODES} nodes at once: one firing applies, one instance and one record per fire time`, async () => {
    // `queue` with room for every instance: each applied firing creates one (BLOCKED behind the first).
    await nodes[0].createCron(cronRecord('race', { overlapPolicy: 'queue', maxCatchUp: ROUNDS * 2 }));
    for (let round = 0; round < ROUNDS; round++) {
      const applied = await race('race', (cron) => [cron.nextFireTime as number]);
      expect(applied, `round ${round}: firings applied`).to.equal(1);
    }
    const { instances, records } = await countsPerFireTime('race');
    const times = Array.from({ length: ROUNDS }, (_, i) => T0 + (i + 1) * SEC);
    expect([...instances.keys()].sort((a, b) => a - b)).to.deep.equal(times);
    expect(
      [...instances.values()].every((n) => n === 1),
      'one instance per fire time',
    ).to.equal(true);
    expect([...records.keys()].sort((a, b) => a - b)).to.deep.equal(times);
    expect(
      [...records.values()].every((n) => n === 1),
      'one fire record per fire time',
    ).to.equal(true);
    expect(await nodes[1].getCron('race')).to.include({ nextFireTime: T0 + (ROUNDS + 1) * SEC, lastFireTime: T0 + ROUNDS * SEC });
    const ids = await withClient(url as string, schema, (c) =>
      c.query<{ id: string }>(`SELECT id FROM tasks WHERE cron_id = 'race' ORDER BY due_at`),
    );
    expect(ids.rows.map((r) => r.id)).to.deep.equal(times.map((t) => cronInstanceId('race', t)));
  });

  it('an edit moving the definition back to fire times already fired: the nodes fire them again without a second instance', async () => {
    await nodes[0].createCron(cronRecord('back', { overlapPolicy: 'queue', maxCatchUp: 1000 }));
    for (let round = 0; round < 10; round++) expect(await race('back', (cron) => [cron.nextFireTime as number])).to.equal(1);
    for (let round = 0; round < ROUNDS / 2; round++) {
      // Back to the first fire time: a catch-up of all ten instants again, on three nodes at once.
      const edited = await nodes[round % NODES].updateCron('back', { nextFireTime: T0 + SEC }, T0 + 100 * SEC + round);
      expect(edited?.nextFireTime).to.equal(T0 + SEC);
      const applied = await race('back', () => Array.from({ length: 10 }, (_, i) => T0 + (i + 1) * SEC));
      expect(applied, `round ${round}: firings applied`).to.equal(1);
    }
    const { instances, records } = await countsPerFireTime('back');
    expect(instances.size).to.equal(10);
    expect(
      [...instances.values()].every((n) => n === 1),
      'one instance per fire time',
    ).to.equal(true);
    expect(records.size).to.equal(10);
    expect(
      [...records.values()].every((n) => n === 1),
      'one fire record per fire time',
    ).to.equal(true);
  });

  it('several crons fired in one call by each node, in different orders: each fire time of each cron once', async () => {
    const ids = ['m0', 'm1', 'm2', 'm3', 'm4'];
    for (const id of ids) await nodes[0].createCron(cronRecord(id, { overlapPolicy: 'queue', maxCatchUp: 1000 }));
    const rounds = ROUNDS / 2;
    for (let round = 0; round < rounds; round++) {
      const plans = await Promise.all(
        nodes.map(async (n, i) => {
          const crons = await Promise.all(ids.map((id) => n.getCron(id)));
          const list = crons.map((c) => firing(c as CronRecord, [(c as CronRecord).nextFireTime as number]));
          // Node 0 in id order, node 1 reversed, node 2 rotated.
          return i === 0 ? list : i === 1 ? list.reverse() : [...list.slice(2), ...list.slice(0, 2)];
        }),
      );
      const results = await Promise.all(nodes.map((n, i) => n.fireCrons(plans[i], T0 + (round + 1) * SEC + 5)));
      for (const id of ids) {
        const applied = results.flat().filter((r) => r.cronId === id && r.applied).length;
        expect(applied, `round ${round}, cron ${id}: firings applied`).to.equal(1);
      }
      // Results come back in the order each node asked for.
      results.forEach((list, i) => expect(list.map((r) => r.cronId)).to.deep.equal(plans[i].map((p) => p.cronId)));
    }
    for (const id of ids) {
      const { instances, records } = await countsPerFireTime(id);
      expect(instances.size, id).to.equal(rounds);
      expect(
        [...instances.values()].every((n) => n === 1),
        `${id}: one instance per fire time`,
      ).to.equal(true);
      expect(records.size, id).to.equal(rounds);
    }
  });

  it('cancel_running fired by three nodes at once: one instance per fire time, never two live and out of the queue', async () => {
    await nodes[0].createCron(cronRecord('cr', { overlapPolicy: 'cancel_running' }));
    for (let round = 0; round < ROUNDS; round++) {
      expect(await race('cr', (cron) => [cron.nextFireTime as number]), `round ${round}`).to.equal(1);
      // Queued instances are released by all three nodes at once, too.
      const released = await Promise.all(nodes.map((n) => n.releaseQueuedInstances(['cr'], T0 + 1000 * SEC + round)));
      expect(released.flat().length, `round ${round}: released`).to.be.at.most(1);
      const live = await withClient(url as string, schema, (c) =>
        c.query<{ n: string }>(
          `SELECT COUNT(*) AS n FROM tasks WHERE cron_id = 'cr' AND state NOT IN ('SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED', 'BLOCKED')`,
        ),
      );
      expect(Number(live.rows[0].n), `round ${round}: live instances out of the queue`).to.be.at.most(1);
    }
    const { instances, records } = await countsPerFireTime('cr');
    expect(instances.size).to.equal(ROUNDS);
    expect([...instances.values()].every((n) => n === 1)).to.equal(true);
    expect(records.size).to.equal(ROUNDS);
  });

  it('edits merged into one version by three nodes at once (ifVersion): exactly one applies per round', async () => {
    await nodes[0].createCron(cronRecord('edit'));
    for (let round = 0; round < ROUNDS; round++) {
      const seen = await Promise.all(nodes.map((n) => n.getCron('edit')));
      const version = seen[0]!.version;
      const applied = await Promise.all(
        nodes.map((n, i) => n.updateCron('edit', { name: `r${round}n${i}`, ifVersion: version }, T0 + round)),
      );
      const won = applied.filter((a) => a !== null);
      expect(won, `round ${round}`).to.have.length(1);
      expect(await nodes[1].getCron('edit')).to.include({ version: version + 1, name: won[0]!.name });
    }
  });
});
