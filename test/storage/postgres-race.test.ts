/**
 * Several PostgreSQL store instances (several service processes) on one schema, racing: what the
 * conformance suite cannot see with one store, and what FerretDB cannot run (its updates are
 * read-then-write, see mongo-crash-windows.test.ts). Every operation that decides ownership is a
 * compare-and-set the database checks, so of several callers at the same instant exactly one
 * wins: one attempt per claimed task, one grant per lease epoch, one live process per member id.
 * Each store has its own pool, so the calls run on different server connections at once. Every
 * test repeats its race over many rounds; a lost race shows as a double win. Skipped without
 * POSTGRES_URL (failed in CI).
 */
import { expect } from 'chai';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { dropSchema, freshSchema, postgresUrl, registerMissingPostgres } from '../helpers/postgres-schema';
import { idsInPartition, newTask, PARTITIONS, T0 } from './fixtures';

const url = postgresUrl();
const TTL = 15_000;
/** Store instances racing (nodes). */
const NODES = 4;
/** Rounds of each race. */
const ROUNDS = 25;

describe('PostgresStore: nodes racing on one schema', () => {
  if (!url) {
    registerMissingPostgres();
    return;
  }
  let schema: string;
  let nodes: PostgresStore[];

  beforeEach(async () => {
    schema = freshSchema('race');
    nodes = [];
    // One after the other: the first migrates, the others find the schema (migrate under an advisory lock is tested elsewhere).
    for (let i = 0; i < NODES; i++) {
      const s = new PostgresStore(url, { schema, poolSize: 4 });
      await s.open(PARTITIONS);
      nodes.push(s);
    }
  });

  afterEach(async () => {
    for (const s of nodes) await s.close();
    await dropSchema(url, schema);
  });

  describe('task claims', () => {
    it('two nodes claiming the same task at once: one attempt', async () => {
      const [a, b] = nodes;
      for (let round = 0; round < ROUNDS; round++) {
        const id = `race-${round}`;
        await a.insertTasks([newTask(id)]);
        const [ra, rb] = await Promise.all([a.claimTasks([id], 'wa', T0, 1000), b.claimTasks([id], 'wb', T0, 1000)]);
        expect(ra.length + rb.length, `round ${round}`).to.equal(1);
        const task = await a.getTask(id);
        expect(task!.attempts).to.equal(1);
        expect(task!.workerId).to.equal(ra.length === 1 ? 'wa' : 'wb');
      }
    });

    it('every node claiming one batch (in different orders) at once: each task claimed once, by one node', async () => {
      const ids = Array.from({ length: 40 }, (_, i) => `batch-${i}`);
      await nodes[0].insertTasks(ids.map((id) => newTask(id)));
      // Orders that cross: forwards, backwards, odd-even interleaved, rotated.
      const orders = [
        ids,
        [...ids].reverse(),
        [...ids.filter((_, i) => i % 2), ...ids.filter((_, i) => i % 2 === 0)],
        [...ids.slice(20), ...ids.slice(0, 20)],
      ];
      const claims = await Promise.all(nodes.map((s, i) => s.claimTasks(orders[i % orders.length], `w${i}`, T0, 60_000)));
      const byTask = new Map<string, string[]>();
      claims.forEach((claimed, i) => claimed.forEach((c) => byTask.set(c.id, [...(byTask.get(c.id) ?? []), `w${i}`])));
      expect([...byTask.keys()].sort()).to.deep.equal([...ids].sort());
      expect([...byTask.values()].filter((workers) => workers.length > 1)).to.deep.equal([]);
      for (const id of ids) {
        const task = await nodes[0].getTask(id);
        expect(task).to.include({ state: 'RUNNING', attempts: 1, workerId: byTask.get(id)![0] });
      }
    });

    it('a stale owner claiming while the new owner fences and claims: no task is claimed twice', async () => {
      const [stale, fresh] = nodes;
      const P = 3;
      for (let round = 0; round < 5; round++) {
        const ids = idsInPartition(P, 20, `fence-${round}`);
        await stale.insertTasks(ids.map((id) => newTask(id)));
        const epoch = round + 1;
        const [staleClaims, freshClaims] = await Promise.all([
          stale.claimTasks(
            ids,
            'stale',
            T0,
            60_000,
            ids.map(() => epoch),
          ),
          (async () => {
            await fresh.fencePartition(P, epoch + 1);
            return fresh.claimTasks(
              ids,
              'fresh',
              T0,
              60_000,
              ids.map(() => epoch + 1),
            );
          })(),
        ]);
        const staleIds = staleClaims.map((c) => c.id);
        const freshIds = freshClaims.map((c) => c.id);
        expect(
          staleIds.filter((id) => freshIds.includes(id)),
          `round ${round}`,
        ).to.deep.equal([]);
        expect([...staleIds, ...freshIds].sort()).to.deep.equal([...ids].sort());
        for (const id of ids) expect((await fresh.getTask(id))!.attempts).to.equal(1);
        // after the fence, the stale epoch claims nothing of the partition
        expect(
          await stale.claimTasks(
            ids,
            'stale',
            T0,
            60_000,
            ids.map(() => epoch),
          ),
        ).to.deep.equal([]);
      }
    });
  });

  describe('partition leases', () => {
    it('every node acquiring one free partition at once: one grant per epoch, epochs 1, 2, 3, …', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        // Each round starts after the previous grant expired: all nodes see the partition free.
        const now = T0 + round * TTL;
        const grants = await Promise.all(nodes.map((s, i) => s.acquireLease(0, `node-${i}`, now, TTL)));
        const won = grants.flatMap((g) => (g.granted ? [g.lease] : []));
        expect(won, `round ${round}`).to.have.length(1);
        expect(won[0]).to.include({ partition: 0, epoch: round + 1, expiresAt: now + TTL });
        for (const g of grants) if (!g.granted) expect(g.current).to.deep.equal(won[0]);
      }
      expect((await nodes[0].listLeases()).map((l) => l.epoch)).to.deep.equal([ROUNDS]);
    });

    it('every node acquiring every partition at once: each partition granted once', async () => {
      const grants = await Promise.all(
        nodes.flatMap((s, i) => Array.from({ length: PARTITIONS }, (_, p) => s.acquireLease(p, `node-${i}`, T0, TTL))),
      );
      const won = grants.flatMap((g) => (g.granted ? [g.lease] : []));
      expect(won.map((l) => l.partition).sort()).to.deep.equal(Array.from({ length: PARTITIONS }, (_, p) => p));
      expect(won.every((l) => l.epoch === 1)).to.equal(true);
    });

    it('a holder renewing while another node takes the expiring lease: exactly one of them wins', async () => {
      const [holder, taker] = nodes;
      for (let round = 0; round < ROUNDS; round++) {
        const partition = 100 + round;
        expect((await holder.acquireLease(partition, 'holder', T0, TTL)).granted).to.equal(true);
        // The holder's clock is 1 ms before the expiry, the taker's at it: each call alone would win.
        const [renewal, grant] = await Promise.all([
          holder.renewLease(partition, 'holder', 1, T0 + TTL - 1, TTL),
          taker.acquireLease(partition, 'taker', T0 + TTL, TTL),
        ]);
        expect(Number(renewal !== null) + Number(grant.granted), `round ${round}`).to.equal(1);
        const lease = (await holder.listLeases()).find((l) => l.partition === partition);
        if (renewal) {
          expect(lease).to.deep.equal({ partition, owner: 'holder', epoch: 1, expiresAt: T0 + 2 * TTL - 1 });
        } else {
          expect(lease).to.deep.equal({ partition, owner: 'taker', epoch: 2, expiresAt: T0 + 2 * TTL });
        }
      }
    });
  });

  describe('members', () => {
    it('processes of one member id heartbeating at once: one is held, the others see it', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        // Each round after the previous holder's record expired.
        const now = T0 + round * TTL;
        const beats = await Promise.all(nodes.map((s, i) => s.heartbeatMember({ memberId: 'm', instance: `i${round}-${i}` }, now, TTL)));
        const held = beats.flatMap((b) => (b.held ? [b.member] : []));
        expect(held, `round ${round}`).to.have.length(1);
        for (const b of beats) if (!b.held) expect(b.holder).to.deep.equal(held[0]);
        expect(await nodes[0].listLiveMembers(now)).to.deep.equal(held);
      }
    });
  });
});
