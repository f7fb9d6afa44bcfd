/**
 * Which PostgreSQL driver the PostgreSQL store is built on (issue 32): node-postgres (`pg`) and
 * Porsager's `postgres`, measured on the store's own schema with the statements of its two hot
 * paths, in the same run, rounds taking turns:
 *
 *   claim:    PENDING → RUNNING for a batch of ids (one UPDATE … FROM unnest … RETURNING),
 *             in a transaction per batch (BEGIN, statement, COMMIT)
 *   complete: RUNNING → SUCCEEDED for a batch (UPDATE … FROM unnest) and the attempts' history
 *             (INSERT … SELECT FROM unnest), in a transaction per batch
 *   ping:     `SELECT 1` one after the other (the round trip)
 *
 * Each system gets a fresh schema (migrations/001) seeded with `--tasks` PENDING rows. Speed is
 * printed, never asserted. Usage (POSTGRES_URL set, e.g. `source .ci/services.sh`):
 *   npm run build && node dist/load-tests/bench-pg-driver.js [--tasks 20000] [--batch 64] [--rounds 3]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import postgres from 'postgres';
import { migrate } from '../src/storage/postgres/migrations';

/** One statement runner: what the two drivers have in common for this bench. */
interface Runner {
  name: string;
  query(text: string, values?: unknown[]): Promise<unknown[]>;
  /** Runs `fn`'s statements in one transaction. */
  tx(fn: (q: (text: string, values?: unknown[]) => Promise<unknown[]>) => Promise<void>): Promise<void>;
  end(): Promise<void>;
}

async function pgRunner(url: string, schema: string): Promise<Runner> {
  const c = new Client({ connectionString: url, options: `-c search_path=${schema} -c synchronous_commit=on` });
  await c.connect();
  const query = async (text: string, values?: unknown[]) => (await c.query(text, values)).rows as unknown[];
  return {
    name: 'pg',
    query,
    async tx(fn) {
      await c.query('BEGIN');
      await fn(query);
      await c.query('COMMIT');
    },
    end: () => c.end(),
  };
}

async function porsagerRunner(url: string, schema: string): Promise<Runner> {
  const sql = postgres(url, { max: 1, connection: { search_path: schema, synchronous_commit: 'on' }, onnotice: () => undefined });
  const query = async (text: string, values?: unknown[]) => [...(await sql.unsafe(text, (values ?? []) as never[]))] as unknown[];
  return {
    name: 'postgres',
    query,
    async tx(fn) {
      await sql.begin(async (t) => {
        await fn(async (text, values) => [...(await t.unsafe(text, (values ?? []) as never[]))] as unknown[]);
      });
    },
    end: () => sql.end(),
  };
}

const CLAIM = `UPDATE tasks t SET state = 'RUNNING', attempts = t.attempts + 1, worker_id = $2, started_at = $3::bigint,
  lease_expires_at = $3::bigint + 30000, updated_at = $3::bigint
  FROM unnest($1::text[]) AS c(id) WHERE t.id = c.id AND t.state = 'PENDING'
  RETURNING t.seq, t.id, t.attempts, t.task_type, t.payload, t.timeout_seconds, t.due_at, t.partition, t.tenant_id`;
const COMPLETE = `UPDATE tasks t SET state = 'SUCCEEDED', completed_at = $3, duration_ms = 1, result = $2, updated_at = $3
  FROM unnest($1::text[]) AS c(id) WHERE t.id = c.id AND t.state = 'RUNNING' AND t.attempts = 1`;
const HISTORY = `INSERT INTO attempts (task_id, attempt, worker_id, started_at, ended_at, outcome)
  SELECT id, 1, 'w', $2, $2, 'SUCCEEDED' FROM unnest($1::text[]) AS c(id)`;

async function seed(url: string, schema: string, tasks: number): Promise<string[]> {
  const c = new Client({ connectionString: url, options: `-c search_path=${schema}` });
  await c.connect();
  try {
    await migrate(c, schema);
    const ids = Array.from({ length: tasks }, () => randomUUID());
    await c.query(
      `INSERT INTO tasks (id, partition, task_type, payload, priority, queue, tenant_id, metadata, max_retries, retry_backoff,
         retry_delay_seconds, timeout_seconds, due_at, state, created_at, updated_at)
       SELECT id, 0, 'noop', '{}', 2, 'default', 'default', '{}', 3, 'exponential', 1, 30, 0, 'PENDING', 0, 0 FROM unnest($1::text[]) AS c(id)`,
      [ids],
    );
    return ids;
  } finally {
    await c.end();
  }
}

/** Claims then completes every id in batches; returns tasks/s of each path and the ping round trip (µs). */
async function measure(r: Runner, ids: string[], batch: number): Promise<Record<string, number>> {
  const batches: string[][] = [];
  for (let i = 0; i < ids.length; i += batch) batches.push(ids.slice(i, i + batch));
  let t = performance.now();
  for (const b of batches) await r.tx(async (q) => void (await q(CLAIM, [b, 'worker-1', Date.now()])));
  const claim = ids.length / ((performance.now() - t) / 1000);
  t = performance.now();
  for (const b of batches) {
    await r.tx(async (q) => {
      const now = Date.now();
      await q(COMPLETE, [b, '{"ok":true}', now]);
      await q(HISTORY, [b, now]);
    });
  }
  const complete = ids.length / ((performance.now() - t) / 1000);
  const pings = 2000;
  t = performance.now();
  for (let i = 0; i < pings; i++) await r.query('SELECT 1');
  const pingUs = ((performance.now() - t) * 1000) / pings;
  return { claim_tasks_per_s: Math.round(claim), complete_tasks_per_s: Math.round(complete), ping_us: Math.round(pingUs) };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      tasks: { type: 'string', default: '20000' },
      batch: { type: 'string', default: '64' },
      rounds: { type: 'string', default: '3' },
    },
  });
  const url = process.env.POSTGRES_URL;
  if (!url) {
    process.stderr.write('bench-pg-driver: set POSTGRES_URL (e.g. `source .ci/services.sh`)\n');
    return 2;
  }
  const tasks = Number(values.tasks);
  const batch = Number(values.batch);
  const rounds = Number(values.rounds);
  const results: Array<{ round: number; driver: string } & Record<string, number | string>> = [];
  for (let round = 1; round <= rounds; round++) {
    for (const make of round % 2 === 1 ? [pgRunner, porsagerRunner] : [porsagerRunner, pgRunner]) {
      const schema = `bench_driver_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
      const ids = await seed(url, schema, tasks);
      const r = await make(url, schema);
      try {
        results.push({ round, driver: r.name, ...(await measure(r, ids, batch)) });
        process.stderr.write(`${JSON.stringify(results[results.length - 1])}\n`);
      } finally {
        await r.end();
        const c = new Client({ connectionString: url });
        await c.connect();
        await c.query(`DROP SCHEMA ${schema} CASCADE`);
        await c.end();
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const summary = Object.fromEntries(
    ['pg', 'postgres'].map((d) => {
      const rs = results.filter((x) => x.driver === d);
      return [
        d,
        Object.fromEntries(['claim_tasks_per_s', 'complete_tasks_per_s', 'ping_us'].map((k) => [k, median(rs.map((x) => x[k] as number))])),
      ];
    }),
  );
  process.stdout.write(`${JSON.stringify({ settings: { tasks, batch, rounds }, median: summary, runs: results }, null, 2)}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`bench-pg-driver failed: ${(err as Error).stack ?? err}\n`);
    process.exitCode = 1;
  },
);
