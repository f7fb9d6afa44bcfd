/**
 * Several PostgreSQL store instances (nodes) on one schema, racing on the tasks of one workflow:
 * completions on some nodes, cancels on others, at the same instant (READ COMMITTED, each store
 * with its own pool and writing connection). The workflow steps lock the workflow row before its
 * tasks (src/storage/postgres/ops/workflow-progress.ts) and decrement counts in the database, so
 * no downstream count or open-task count is lost, a join is released exactly once, and the
 * workflow's status is settled once, from every task's end. Every race repeats over many rounds.
 * Task-level races are in postgres-race.test.ts. Skipped without POSTGRES_URL (failed in CI).
 */
import { expect } from 'chai';
import { PostgresStore } from '../../src/storage/postgres/postgres-store';
import { dropSchema, freshSchema, postgresUrl, registerMissingPostgres, withClient } from '../helpers/postgres-schema';
import { Spec, workflow } from './conformance/workflows';
import { completion, PARTITIONS, T0, taskError } from './fixtures';

const url = postgresUrl();
/** Store instances racing (nodes). */
const NODES = 3;
/** Rounds of each race. */
const ROUNDS = 10;

describe('PostgresStore: nodes racing on the tasks of one workflow', () => {
  if (!url) {
    registerMissingPostgres();
    return;
  }
  let schema: string;
  let nodes: PostgresStore[];

  beforeEach(async () => {
    schema = freshSchema('wfrace');
    nodes = [];
    for (let i = 0; i < NODES; i++) {
      const s = new PostgresStore(url, { schema, poolSize: 3 });
      await s.open(PARTITIONS);
      nodes.push(s);
    }
  });

  afterEach(async () => {
    for (const s of nodes) await s.close();
    await dropSchema(url, schema);
  });

  /** Roots `R0…R{n-1}` and the tasks given after them. */
  const roots = (n: number): Spec => Array.from({ length: n }, (_, i) => [`R${i}`, []] as Spec[number]);
  const rootIds = (wf: string, n: number) => Array.from({ length: n }, (_, i) => `${wf}.R${i}`);

  it('the upstreams of a join completed on every node at once: the join is released once, its count reaches 0', async () => {
    const per = 3;
    for (let round = 0; round < ROUNDS; round++) {
      const wf = `join-${round}`;
      const n = NODES * per;
      await nodes[0].insertWorkflow(workflow(wf, [...roots(n), ['J', roots(n).map(([local]) => local)]]));
      const claimed = await nodes[0].claimTasks(rootIds(wf, n), 'w-1', T0, 60_000);
      expect(claimed).to.have.length(n);
      const results = await Promise.all(
        nodes.map((s, k) =>
          s.completeAttempts(
            claimed.slice(k * per, (k + 1) * per).map((t) => completion(t.id, t.attempt, 'SUCCEEDED', { result: t.id })),
            T0 + 10,
          ),
        ),
      );
      const released = results.flat().flatMap((r) => r.released ?? []);
      expect(
        released.map((e) => e.id),
        `round ${round}`,
      ).to.deep.equal([`${wf}.J`]);
      const j = (await nodes[1].getWorkflowTasks(wf)).find((t) => t.workflowTaskId === 'J');
      expect(j, `round ${round}`).to.include({ state: 'PENDING', unmetDependencies: 0 });
      expect(await nodes[2].getWorkflow(wf), `round ${round}`).to.include({ status: 'RUNNING', openTasks: 1 });
    }
  });

  it('completions on one node, cancels on another: no open count lost; the last end settles the status once', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const wf = `mix-${round}`;
      const leaves: Spec = [0, 1, 2, 3].map((i) => [`S${i}`, []]);
      await nodes[0].insertWorkflow(workflow(wf, [...roots(4), ...leaves, ['J', ['R0', 'R1', 'R2', 'R3']]]));
      const claimed = await nodes[0].claimTasks(rootIds(wf, 4), 'w-1', T0, 60_000);
      const [a, b] = nodes;
      await Promise.all([
        ...claimed.map((t) => a.completeAttempts([completion(t.id, t.attempt, 'SUCCEEDED')], T0 + 10)),
        ...[0, 1, 2, 3].map((i) => b.cancelTask(`${wf}.S${i}`, T0 + 10)),
      ]);
      expect(await a.getWorkflow(wf), `round ${round}`).to.include({ status: 'RUNNING', openTasks: 1 });
      const [j] = await b.claimTasks([`${wf}.J`], 'w-2', T0 + 20, 60_000);
      expect(j, `round ${round}`).to.not.equal(undefined);
      await b.completeAttempts([completion(j.id, j.attempt, 'SUCCEEDED')], T0 + 30);
      expect(await a.getWorkflow(wf), `round ${round}`).to.include({ status: 'CANCELLED', openTasks: 0, completedAt: T0 + 30 });
    }
  });

  it('the last two tasks end on two nodes at once, one FAILED: the workflow ends FAILED every time', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const wf = `last-${round}`;
      await nodes[0].insertWorkflow(workflow(wf, roots(2)));
      const [x, y] = await nodes[0].claimTasks(rootIds(wf, 2), 'w-1', T0, 60_000);
      const failed = completion(y.id, y.attempt, 'FAILED', { error: taskError('bad', 'PermanentError', false) });
      const ok = completion(x.id, x.attempt, 'SUCCEEDED');
      // Alternate which node gets which end.
      const [first, second] = round % 2 === 0 ? [nodes[1], nodes[2]] : [nodes[2], nodes[1]];
      await Promise.all([first.completeAttempts([ok], T0 + 10), second.completeAttempts([failed], T0 + 10)]);
      expect(await nodes[0].getWorkflow(wf), `round ${round}`).to.include({ status: 'FAILED', openTasks: 0, completedAt: T0 + 10 });
    }
  });

  it('cancelWorkflow on one node while another completes its running tasks: CANCELLED, nothing left open or in limbo', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const wf = `cw-${round}`;
      await nodes[0].insertWorkflow(workflow(wf, [...roots(4), ['J', ['R0', 'R1', 'R2', 'R3']], ['K', ['J']]]));
      const claimed = await nodes[0].claimTasks(rootIds(wf, 4), 'w-1', T0, 60_000);
      const [a, b] = nodes;
      const [results, cancel] = await Promise.all([
        a.completeAttempts(
          claimed.map((t) => completion(t.id, t.attempt, 'SUCCEEDED')),
          T0 + 10,
        ),
        b.cancelWorkflow(wf, T0 + 10),
      ]);
      expect(
        results.map((r) => r.state),
        `round ${round}`,
      ).to.deep.equal(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
      expect(cancel.kind, `round ${round}`).to.equal('cancelled');
      const tasks = await a.getWorkflowTasks(wf);
      expect(
        tasks.map((t) => t.state),
        `round ${round}`,
      ).to.deep.equal(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED', 'CANCELLED', 'CANCELLED']);
      expect(await b.getWorkflow(wf), `round ${round}`).to.include({ status: 'CANCELLED', openTasks: 0, cancelRequested: true });
    }
    expect((await nodes[2].auditScan(T0 + 100, T0, 100)).blockedLimbo).to.deep.equal([]);
  });

  it('a group commit with a workflow cancel locks that workflow with the others it declared, first, in id order', async () => {
    // Another node holds workflow wf-z. A batch that cancels a task of wf-z and the workflow wf-b
    // must hold wf-b (before wf-z in id order) while it waits for wf-z, as any other node's batch
    // touching both would: it locked wf-b only when the cancel ran, after wf-z, and two such batches
    // deadlocked (broken after PostgreSQL's deadlock_timeout).
    await nodes[0].insertWorkflow(workflow('wf-b', roots(1)));
    await nodes[0].insertWorkflow(workflow('wf-z', roots(2)));
    await withClient(url, schema, async (holder) => {
      await holder.query('BEGIN');
      await holder.query(`SELECT id FROM workflows WHERE id = 'wf-z' FOR UPDATE`);
      const node = nodes[1];
      // Both on the main writing connection, queued in one turn: one group commit.
      const both = Promise.all([node.cancelTask('wf-z.R0', T0 + 10), node.cancelWorkflow('wf-b', T0 + 10)]);
      // Wait for that batch to queue behind the holder's lock (an event in pg_stat_activity, not a time).
      await withClient(url, schema, async (watcher) => {
        for (;;) {
          const { rows } = await watcher.query(
            `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND pid <> pg_backend_pid() AND query LIKE '%FOR UPDATE OF w%'`,
          );
          if (rows.length > 0) break;
          await new Promise((r) => setImmediate(r));
        }
        const probe = await watcher.query(`SELECT id FROM workflows WHERE id = 'wf-b' FOR UPDATE NOWAIT`).then(
          () => 'free',
          (err: { code?: string }) => err.code,
        );
        expect(probe, 'wf-b is held by the waiting batch (55P03: lock not available)').to.equal('55P03');
      });
      await holder.query('COMMIT');
      const [task, cancel] = await both;
      expect(task.kind).to.equal('cancelled');
      expect(cancel.kind).to.equal('cancelled');
    });
  });
});
