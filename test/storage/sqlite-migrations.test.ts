/**
 * SQLite-specific: a store written by an older schema opens under this build with its waiting tasks
 * intact, found through the rebuilt indexes (migration 011 reorders the waiting-task indexes), and
 * the upgrade is reported (`open`'s answer, the service's log line).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { startScheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { openConnection } from '../../src/storage/sqlite/connection';
import { migrate, SCHEMA_VERSION } from '../../src/storage/sqlite/migrations';
import type Database from 'better-sqlite3';
import { NewTask } from '../../src/domain/task';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { StoreConfigError } from '../../src/storage/store';
import { idsInPartition, newTask, PARTITIONS, T0 } from './fixtures';

describe('SqliteStore schema upgrade', () => {
  let dir: string;
  let store: SqliteStore | null = null;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-migrations-'));
  });

  afterEach(async () => {
    await store?.close();
    store = null;
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('opens a schema-11 store: its tasks have no checkpoint, claim without one, and take one', async () => {
    const file = path.join(dir, 'scheduler.db');
    const old = openConnection(file);
    expect(migrate(old, 11)).to.have.length(11);
    insertOldRows(old, [newTask('v11-a', { createdAt: T0 })]);
    old.close();
    store = new SqliteStore(file);
    expect(await store.open(PARTITIONS)).to.deep.equal({
      from: 11,
      to: SCHEMA_VERSION,
      applied: [
        '012-checkpoints',
        '013-concurrency-keys',
        '014-overflow',
        '015-attempt-logs',
        '016-member-instance',
        '017-idempotency-key-expiry',
        '018-member-bus',
      ],
    });
    expect(await store.getTask('v11-a')).to.not.have.property('checkpoint');
    const [claimed] = await store.claimTasks(['v11-a'], 'w', T0, 60_000);
    expect(claimed).to.not.have.property('lastCheckpoint');
    expect(await store.saveCheckpoint('v11-a', claimed.attempt, { next: 3 }, T0 + 1)).to.include({ kind: 'saved' });
    expect((await store.getTask('v11-a'))?.checkpoint).to.deep.include({ value: { next: 3 }, attempt: 1 });
  });

  it('opens a schema-10 store: waiting tasks in every partition are read by due time through the due-ordered indexes', async () => {
    const file = path.join(dir, 'scheduler.db');
    const old = openConnection(file);
    expect(migrate(old, 10)).to.have.length(10);
    const ids = Array.from({ length: PARTITIONS }, (_, p) => idsInPartition(p, 2, 'v10'));
    // Per partition: one task due at T0 + 100 (SCHEDULED), one run-now task (PENDING, due T0).
    insertOldRows(
      old,
      ids.flatMap(([a, b]) => [newTask(a, { createdAt: T0, scheduledAt: T0 + 100 }), newTask(b, { createdAt: T0 })]),
    );
    old.close();

    store = new SqliteStore(file);
    expect(await store.open(PARTITIONS)).to.deep.equal({
      from: 10,
      to: SCHEMA_VERSION,
      applied: [
        '011-due-order-waiting-index',
        '012-checkpoints',
        '013-concurrency-keys',
        '014-overflow',
        '015-attempt-logs',
        '016-member-instance',
        '017-idempotency-key-expiry',
        '018-member-bus',
      ],
    });
    const check = openConnection(file);
    try {
      expect(check.pragma('user_version', { simple: true })).to.equal(SCHEMA_VERSION);
      for (const index of ['tasks_scheduled_due', 'tasks_ready_due']) {
        expect(
          (check.pragma(`index_info(${index})`) as Array<{ name: string }>).map((c) => c.name),
          index,
        ).to.deep.equal(['due_at', 'seq', 'partition']);
      }
      expect((check.pragma('index_info(tasks_overflow)') as Array<{ name: string }>).map((c) => c.name)).to.deep.equal([
        'seq',
        'tenant_id',
      ]);
    } finally {
      check.close();
    }
    for (let p = 0; p < PARTITIONS; p++) {
      expect(
        (await store.loadDue(p, T0 + 100, 10)).map((e) => e.id),
        `partition ${p}`,
      ).to.deep.equal([ids[p][1], ids[p][0]]);
    }
    const scan = await store.auditScan(T0, T0 + 1, 100);
    expect(scan.overdue.map((e) => e.id)).to.deep.equal(ids.map(([, b]) => b));
    expect(scan.overdueTotal).to.equal(PARTITIONS);
    await store.close();
    store = new SqliteStore(file);
    expect(await store.open(PARTITIONS), 'nothing to change the second time').to.equal(null);
  });

  it('a new store reports its creation at the current schema version', async () => {
    store = new SqliteStore(path.join(dir, 'new.db'));
    const created = await store.open(PARTITIONS);
    expect(created?.from).to.equal(0);
    expect(created?.to).to.equal(SCHEMA_VERSION);
    expect(created?.applied).to.have.length(SCHEMA_VERSION);
  });

  it('a store written by a newer version is refused, unchanged (StoreConfigError: exit 78 at start)', async () => {
    const file = path.join(dir, 'newer.db');
    const db = openConnection(file);
    migrate(db);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    store = new SqliteStore(file);
    const err = await store.open(PARTITIONS).then(
      () => null,
      (e: unknown) => e,
    );
    store = null;
    expect(err).to.be.instanceOf(StoreConfigError);
    expect((err as Error).message).to.equal(
      `the store ${file} has schema version ${SCHEMA_VERSION + 1}, newer than this build knows (${SCHEMA_VERSION})`,
    );
    const check = openConnection(file);
    expect(check.pragma('user_version', { simple: true })).to.equal(SCHEMA_VERSION + 1);
    check.close();
  });

  it('the service logs the upgrade at start: store, versions and migrations applied', async function () {
    this.timeout(30_000);
    const file = path.join(dir, 'scheduler.db');
    const old = openConnection(file);
    migrate(old, 10);
    old.close();
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const config = loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: { sqlitePath: file, partitions: PARTITIONS },
    });
    const scheduler = await startScheduler(config, { logger });
    await scheduler.close();
    const upgrade = lines.find((l) => l.msg === 'store schema upgraded');
    expect(upgrade).to.include({ store: 'sqlite', from: 10, to: SCHEMA_VERSION });
    expect(upgrade?.applied).to.deep.equal([
      '011-due-order-waiting-index',
      '012-checkpoints',
      '013-concurrency-keys',
      '014-overflow',
      '015-attempt-logs',
      '016-member-instance',
      '017-idempotency-key-expiry',
      '018-member-bus',
    ]);
  });
});

/** Inserts `tasks` with the columns every schema from 10 to 11 has (no later column). */
function insertOldRows(db: Database.Database, tasks: NewTask[]): void {
  const stmt = db.prepare(`
    INSERT INTO tasks (id, partition, task_type, payload, priority, queue, tenant_id, metadata, max_retries, retry_backoff,
      retry_delay_seconds, timeout_seconds, scheduled_at, due_at, state, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const rank = { high: 0, medium: 1, low: 2 };
  for (const t of tasks) {
    stmt.run(
      t.id,
      t.partition,
      t.taskType,
      JSON.stringify(t.payload),
      rank[t.priority],
      t.queue,
      t.tenantId,
      JSON.stringify(t.metadata),
      t.retry.maxRetries,
      t.retry.backoff,
      t.retry.delaySeconds,
      t.timeoutSeconds,
      t.scheduledAt,
      t.dueAt,
      t.state,
      t.createdAt,
      t.createdAt,
    );
  }
}
