/**
 * The PostgreSQL store's database cost per task on the hot path (insert → claim → completion),
 * deterministic: `--tasks` noop tasks go through the store's own operations, one call after the
 * other (inserts of `--insert-batch`, claims and completions of `--batch` ids), on a fresh schema
 * of `POSTGRES_URL`. Per phase it prints, per task: WAL bytes (pg_current_wal_lsn difference; one
 * CHECKPOINT before the inserts, so no page written by the run gets a full-page image), statements
 * and COMMITs (pg_stat_statements when the server
 * loads it and the database has the extension, else 0) and, with `--pg-data <folder>` (a server of one's own, its data folder
 * readable through `runuser -u postgres`), the index entries written: the B-tree insert records
 * of pg_waldump for the phase's WAL range, the heap tuples written (insert, update, HOT update
 * records) and the server processes' CPU time (Linux /proc: the server runs on this machine).
 * Figures include other sessions' activity on the server: use a server of one's own.
 *
 * Usage: node dist/load-tests/pg-write-cost.js [--tasks 20000] [--batch 100] [--insert-batch 1000]
 *          [--pg-data /path/to/data]
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { Client } from 'pg';
import { PostgresStore } from '../src/storage/postgres/postgres-store';
import { newTask } from '../src/domain/new-task';
import type { NewTask } from '../src/domain/task';

const PARTITIONS = 12;

/** Command-line value of `--name`, or `fallback`. */
function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

/** The counters read before and after each phase. */
interface Counters {
  lsn: string;
  commits: number;
  statements: number;
}

/** Reads the WAL position and the statement counts (pg_stat_statements, counted at once). */
async function counters(c: Client, statements: boolean): Promise<Counters> {
  const s = statements
    ? await c.query<{ n: string; commits: string }>(
        `SELECT COALESCE(sum(calls) FILTER (WHERE query !~* '^\\s*(BEGIN|COMMIT)'), 0) AS n,
           COALESCE(sum(calls) FILTER (WHERE query ~* '^\\s*COMMIT'), 0) AS commits
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND query !~* '^\\s*(CHECKPOINT|ALTER TABLE|SELECT pg_|SELECT 1 FROM pg_extension|SELECT COALESCE\\(sum\\(calls\\))'`,
      )
    : { rows: [{ n: '0', commits: '0' }] };
  const l = await c.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn');
  return { lsn: l.rows[0].lsn, commits: Number(s.rows[0].commits), statements: Number(s.rows[0].n) };
}

/**
 * CPU time (ms) the server's processes have used so far: the postmaster's live children (backends,
 * WAL writer, checkpointer…) and those that ended (the postmaster's cutime/cstime). Linux /proc;
 * `backendPid` is any backend of the server.
 */
function serverCpuMs(backendPid: number): number {
  const stat = (pid: number): string[] => {
    const text = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  };
  const postmaster = Number(stat(backendPid)[1]);
  const tick = 10; // ms per clock tick (USER_HZ 100)
  const pm = stat(postmaster);
  let ticks = Number(pm[13]) + Number(pm[14]);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const f = stat(Number(entry));
      if (Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // the process ended meanwhile
    }
  }
  return ticks * tick;
}

/** What pg_waldump counts in a WAL range: records (index entries, heap tuples) and bytes. */
interface WalCounts {
  /** B-tree leaf insertions (INSERT_LEAF, INSERT_POST, and the item a SPLIT_L/SPLIT_R inserts). */
  btreeInserts: number;
  fpiBytes: number;
  heapInserts: number;
  /** Non-HOT updates. */
  heapUpdates: number;
  hotUpdates: number;
}

/** B-tree insert records and full-page-image bytes of the WAL between two LSNs (pg_waldump). */
function waldump(dataDir: string, from: string, to: string): WalCounts {
  const out = execFileSync(
    'runuser',
    ['-u', 'postgres', '--', '/usr/lib/postgresql/15/bin/pg_waldump', '--stats=record', '-p', `${dataDir}/pg_wal`, '-s', from, '-e', to],
    { encoding: 'utf8' },
  );
  const counts: WalCounts = { btreeInserts: 0, fpiBytes: 0, heapInserts: 0, heapUpdates: 0, hotUpdates: 0 };
  for (const line of out.split('\n')) {
    const m = /^(\S+)\s+(\d+)\s+\(\s*[\d.]+\)\s+(\d+)\s+\(\s*[\d.]+\)\s+(\d+)\s+\(\s*[\d.]+\)/.exec(line.trim());
    if (!m) continue;
    const records = Number(m[2]);
    if (/^Btree\/(INSERT_LEAF|INSERT_POST|SPLIT_L|SPLIT_R)$/.test(m[1])) counts.btreeInserts += records;
    if (/^Heap\/INSERT/.test(m[1])) counts.heapInserts += records;
    if (/^Heap\/UPDATE/.test(m[1])) counts.heapUpdates += records;
    if (/^Heap\/HOT_UPDATE/.test(m[1])) counts.hotUpdates += records;
    counts.fpiBytes += Number(m[4]);
  }
  return counts;
}

/** Runs the three phases and prints their cost per task. */
async function main(): Promise<void> {
  const url = process.env.POSTGRES_URL;
  if (!url) throw new Error('POSTGRES_URL is not set');
  const n = Number(arg('tasks', '20000'));
  const batch = Number(arg('batch', '100'));
  const insertBatch = Number(arg('insert-batch', '1000'));
  const dataDir = arg('pg-data', '');
  const schema = `write_cost_${process.pid}`;
  const admin = new Client({ connectionString: url });
  await admin.connect();
  const statements = (await admin.query(`SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'`)).rowCount === 1;
  const store = new PostgresStore(url, { schema, poolSize: 4 });
  const now = Date.now();
  try {
    await store.open(PARTITIONS);
    await admin.query(`ALTER TABLE ${schema}.tasks SET (autovacuum_enabled = off)`);
    await admin.query(`ALTER TABLE ${schema}.attempts SET (autovacuum_enabled = off)`);
    const tasks: NewTask[] = [];
    for (let i = 0; i < n; i++) {
      tasks.push(
        newTask(
          {
            taskType: 'noop',
            payload: { n: i },
            priority: 'medium',
            queue: 'default',
            tenantId: 'default',
            correlationId: null,
            metadata: {},
            retry: { maxRetries: 3, backoff: 'exponential', delaySeconds: 1, jitter: true },
            timeoutSeconds: 30,
            scheduledAt: null,
          },
          { now, partitions: PARTITIONS },
        ),
      );
    }
    const phases: Array<[string, () => Promise<void>]> = [
      [
        'insert',
        async () => {
          for (let i = 0; i < n; i += insertBatch) await store.insertTasks(tasks.slice(i, i + insertBatch));
        },
      ],
      [
        'claim',
        async () => {
          for (let i = 0; i < n; i += batch)
            await store.claimTasks(
              tasks.slice(i, i + batch).map((t) => t.id),
              'w1',
              now + 1,
              60_000,
            );
        },
      ],
      [
        'complete',
        async () => {
          for (let i = 0; i < n; i += batch) {
            await store.completeAttempts(
              tasks
                .slice(i, i + batch)
                .map((t) => ({ taskId: t.id, attempt: 1, state: 'SUCCEEDED', retryAt: null, result: null, error: null, durationMs: 1 })),
              now + 2,
            );
          }
        },
      ],
    ];
    const totals = { wal: 0, fpi: 0, index: 0, ins: 0, upd: 0, hot: 0, statements: 0, commits: 0, cpu: 0 };
    const backendPid = (await admin.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid;
    const per = (x: number): string => (x / n).toFixed(2);
    const perK = (x: number): string => ((x * 1000) / n).toFixed(1);
    const line = (name: string, t: typeof totals): string =>
      [
        name.padEnd(9),
        per(t.wal),
        per(t.fpi),
        per(t.index),
        per(t.ins),
        per(t.upd),
        per(t.hot),
        perK(t.statements),
        perK(t.commits),
        perK(t.cpu),
      ]
        .map((v, i) => (i === 0 ? v : v.padStart(11)))
        .join(' ');
    console.log(
      [
        'phase    ',
        'WAL B',
        'of it FPI',
        'idx entries',
        'heap ins',
        'non-HOT upd',
        'HOT upd',
        'stmts/1000',
        'COMMIT/1000',
        'DB CPU ms/1000',
      ]
        .map((v, i) => (i === 0 ? v : v.padStart(11)))
        .join(' '),
    );
    await admin.query('CHECKPOINT');
    for (const [name, run] of phases) {
      const a = await counters(admin, statements);
      const cpu0 = dataDir ? serverCpuMs(backendPid) : 0;
      await run();
      const cpu = dataDir ? serverCpuMs(backendPid) - cpu0 : 0;
      const b = await counters(admin, statements);
      const wal = Number((await admin.query<{ d: string }>('SELECT pg_wal_lsn_diff($1, $2) AS d', [b.lsn, a.lsn])).rows[0].d);
      const dump = dataDir ? waldump(dataDir, a.lsn, b.lsn) : null;
      const phase = {
        wal,
        fpi: dump?.fpiBytes ?? 0,
        index: dump?.btreeInserts ?? 0,
        ins: dump?.heapInserts ?? 0,
        upd: dump?.heapUpdates ?? 0,
        hot: dump?.hotUpdates ?? 0,
        statements: b.statements - a.statements,
        commits: b.commits - a.commits,
        cpu,
      };
      for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += phase[k];
      console.log(line(name, phase));
    }
    console.log(line('total', totals));
    const size = await admin.query<{ heap: string; indexes: string }>(
      `SELECT pg_relation_size('${schema}.tasks') AS heap, pg_indexes_size('${schema}.tasks') AS indexes`,
    );
    console.log(
      `tasks: heap ${(Number(size.rows[0].heap) / n).toFixed(0)} B/task, indexes ${(Number(size.rows[0].indexes) / n).toFixed(0)} B/task (no vacuum)`,
    );
    console.log("(per task; statements, COMMITs and the server processes' CPU ms per 1,000 tasks)");
  } finally {
    await store.close();
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
