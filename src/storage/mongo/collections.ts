/**
 * Collections and indexes of the MongoDB adapter (docs/MONGODB.md), the server capabilities found
 * at open, and the `meta` documents (partition count, schema version).
 *
 * Capabilities are probed, never assumed from a version string: a TTL index or a partial index
 * that the server refuses with NotImplemented (code 238, FerretDB) falls back to a plain index.
 * Correctness never rests on either: TTL deletion is only garbage collection (the retention pass
 * and the readers' own expiry checks decide), and a partial index only saves space (every query
 * carries the full filter).
 */
import type { Collection, Db, Document } from 'mongodb';
import { StoreConfigError } from '../store';
import type { CronDoc, CronFireDoc } from './cron-documents';
import type { IdempotencyKeyDoc, TaskDoc } from './documents';
import type { TaskTypeLimitDoc, TenantSettingsDoc } from './ops/tenant-settings';
import type { ConcurrencyLimitDoc } from './ops/concurrency-limits';
import type { WorkflowDoc } from './workflow-documents';
import type { AttemptLogDoc } from './attempt-log-documents';

/** Version of the document layout this code writes; refused when the database is newer. */
export const SCHEMA_VERSION = 1;

/** A `meta` document: `{_id: 'partitions' | 'schema_version' | '<counter>', value}`. */
export interface MetaDoc {
  _id: string;
  value: number;
}

/**
 * A `partition_leases` document: partition ownership with a fencing epoch (cluster-store.ts).
 * Never deleted and never TTL-indexed: a partition's epoch must only grow, and deleting an expired
 * lease would start it again at 1 below the epochs its tasks already carry. One document per
 * partition, so there is nothing to collect.
 */
export interface LeaseDoc {
  _id: number;
  owner: string;
  epoch: number;
  /** Epoch ms; held while `expires_at > now` (the caller's `now`), 0 once released. */
  expires_at: number;
}

/** A `members` document: a live service process and its heartbeat. */
export interface MemberDoc {
  _id: string;
  address: string | null;
  heartbeat_at: number;
  /** Epoch ms; live while `expires_at > now`. */
  expires_at: number;
  /** `expires_at` as a Date, for the TTL index (garbage collection of dead members only). */
  gc_at: Date;
  /** Token of the process holding the member id; absent in documents written before tokens. */
  instance?: string | null;
  /** The member's bus (`MemberRecord.bus`); absent in documents written before buses were recorded. */
  bus?: string | null;
}

/** The collections of one scheduler database. */
export interface MongoCollections {
  tasks: Collection<TaskDoc>;
  idempotencyKeys: Collection<IdempotencyKeyDoc>;
  crons: Collection<CronDoc>;
  cronFires: Collection<CronFireDoc>;
  workflows: Collection<WorkflowDoc>;
  meta: Collection<MetaDoc>;
  leases: Collection<LeaseDoc>;
  members: Collection<MemberDoc>;
  tenantSettings: Collection<TenantSettingsDoc>;
  taskTypeLimits: Collection<TaskTypeLimitDoc>;
  concurrencyLimits: Collection<ConcurrencyLimitDoc>;
  attemptLogs: Collection<AttemptLogDoc>;
}

/** What the server was found to support at open. */
export interface MongoCapabilities {
  /** `expireAfterSeconds` indexes (MongoDB: yes; FerretDB 1.x: no). */
  ttlIndexes: boolean;
  /** `partialFilterExpression` indexes (MongoDB: yes; FerretDB 1.x: no). */
  partialIndexes: boolean;
  /**
   * Single-document updates are atomic: a compare-and-set filter is checked and applied as one
   * step even against writers on other connections (MongoDB: yes, always). FerretDB 1.x applies
   * an update as read-then-write, so two connections can both win the same compare-and-set (its
   * unique indexes do hold). One store instance is still correct there, because it sends its
   * writes one at a time (write-queue.ts); several nodes on one FerretDB database are not.
   * Detected from `buildInfo` (FerretDB adds `ferretdbVersion`).
   */
  atomicUpdates: boolean;
}

export function collectionsOf(db: Db): MongoCollections {
  return {
    tasks: db.collection<TaskDoc>('tasks'),
    idempotencyKeys: db.collection<IdempotencyKeyDoc>('idempotency_keys'),
    crons: db.collection<CronDoc>('cron_tasks'),
    cronFires: db.collection<CronFireDoc>('cron_fires'),
    workflows: db.collection<WorkflowDoc>('workflows'),
    meta: db.collection<MetaDoc>('meta'),
    leases: db.collection<LeaseDoc>('partition_leases'),
    members: db.collection<MemberDoc>('members'),
    tenantSettings: db.collection<TenantSettingsDoc>('tenant_settings'),
    taskTypeLimits: db.collection<TaskTypeLimitDoc>('task_type_limits'),
    concurrencyLimits: db.collection<ConcurrencyLimitDoc>('concurrency_limits'),
    attemptLogs: db.collection<AttemptLogDoc>('attempt_logs'),
  };
}

const NOT_IMPLEMENTED = 238;

function notImplemented(err: unknown): boolean {
  const e = err as { code?: unknown; codeName?: unknown } | null;
  return e?.code === NOT_IMPLEMENTED || e?.codeName === 'NotImplemented';
}

/**
 * Creates every index (idempotent: same name and keys as before is a no-op) and reports the
 * capabilities found. Index list and purpose: docs/MONGODB.md.
 */
export async function ensureIndexes(c: MongoCollections): Promise<Omit<MongoCapabilities, 'atomicUpdates'>> {
  const caps = { ttlIndexes: true, partialIndexes: true };

  /** A partial index where supported, else the same keys without the filter. */
  async function partial<T extends Document>(
    coll: Collection<T>,
    keys: Record<string, 1 | -1>,
    name: string,
    filter: Record<string, unknown>,
  ): Promise<void> {
    if (caps.partialIndexes) {
      try {
        await coll.createIndex(keys, { name, partialFilterExpression: filter });
        return;
      } catch (err) {
        if (!notImplemented(err)) throw err;
        caps.partialIndexes = false;
      }
    }
    await coll.createIndex(keys, { name });
  }

  /** A TTL index (expire at the Date in `field`) where supported, else a plain index on it. */
  async function ttl<T extends Document>(coll: Collection<T>, field: string, name: string): Promise<void> {
    if (caps.ttlIndexes) {
      try {
        await coll.createIndex({ [field]: 1 }, { name, expireAfterSeconds: 0 });
        return;
      } catch (err) {
        if (!notImplemented(err)) throw err;
        caps.ttlIndexes = false;
      }
    }
    await coll.createIndex({ [field]: 1 }, { name });
  }

  // tasks: due tasks of a partition (loadDue), listing (seq, state + seq), leases, retention, cron instances.
  await c.tasks.createIndex({ partition: 1, state: 1, due_at: 1, seq: 1 }, { name: 'tasks_partition_state_due' });
  await c.tasks.createIndex({ seq: -1 }, { name: 'tasks_seq', unique: true });
  await c.tasks.createIndex({ state: 1, seq: -1 }, { name: 'tasks_state_seq' });
  await c.tasks.createIndex({ state: 1, lease_expires_at: 1 }, { name: 'tasks_state_lease' });
  await c.tasks.createIndex({ state: 1, completed_at: 1 }, { name: 'tasks_state_completed' });
  await partial(c.tasks, { cron_id: 1, state: 1, due_at: 1 }, 'tasks_cron_live', { cron_id: { $type: 'string' } });
  // idempotency keys: one holder per (tenant, key); released keys found by expiry for the purge.
  await c.idempotencyKeys.createIndex({ tenant_id: 1, key: 1 }, { name: 'idempotency_tenant_key', unique: true });
  await c.idempotencyKeys.createIndex({ expires_at: 1 }, { name: 'idempotency_expires' });
  await c.idempotencyKeys.createIndex({ batch: 1 }, { name: 'idempotency_batch' });
  // cron definitions: listing newest first, due definitions in fire order.
  await c.crons.createIndex({ seq: -1 }, { name: 'cron_tasks_seq', unique: true });
  await partial(c.crons, { enabled: 1, next_fire_time: 1 }, 'cron_tasks_due', { enabled: true });
  // fire records: one per (cron, fire time); retention oldest first.
  await c.cronFires.createIndex({ cron_id: 1, fire_time: -1 }, { name: 'cron_fires_cron_time', unique: true });
  await c.cronFires.createIndex({ fire_time: 1 }, { name: 'cron_fires_time' });
  // workflow tasks: a workflow's tasks in submission order (view, cancel, counts, insert and its undo);
  // tasks whose workflow follow-up a crash left unfinished (the repair pass, repair-workflows.ts).
  // (`$exists`, not `$type`: MongoDB uses a partial index only for queries that imply its filter;
  // an equality on `workflow_id` implies `$exists: true`.)
  await partial(c.tasks, { workflow_id: 1, seq: 1 }, 'tasks_workflow_seq', { workflow_id: { $exists: true } });
  await partial(c.tasks, { wf_done: 1, state: 1 }, 'tasks_wf_done', { wf_done: false });
  await partial(c.tasks, { wf_replay: 1 }, 'tasks_wf_replay', { wf_replay: true });
  // workflows: listing newest first (all, by status, by tenant); retention of finished ones.
  await c.workflows.createIndex({ seq: -1 }, { name: 'workflows_seq', unique: true });
  await c.workflows.createIndex({ status: 1, seq: -1 }, { name: 'workflows_status_seq' });
  await c.workflows.createIndex({ tenant_id: 1, seq: -1 }, { name: 'workflows_tenant_seq' });
  await c.workflows.createIndex({ completed_at: 1 }, { name: 'workflows_completed' });
  // waiting tasks per tenant (backpressure counts) and tenant-scoped listings.
  await c.tasks.createIndex({ tenant_id: 1, state: 1 }, { name: 'tasks_tenant_state' });
  // cluster mode: dead members are garbage-collected by TTL where possible (listLiveMembers compares
  // expires_at with `now` itself); partition leases are never deleted (see LeaseDoc).
  await ttl(c.members, 'gc_at', 'members_gc');
  await c.members.createIndex({ expires_at: 1 }, { name: 'members_expires' });
  // attempt logs: an attempt's lines in order (read, trim); a task's lines (deleted with it).
  await c.attemptLogs.createIndex({ task_id: 1, attempt: 1, n: 1 }, { name: 'attempt_logs_attempt_n' });
  return caps;
}

/** Whether single-document updates are atomic across connections (see {@link MongoCapabilities}). */
export async function detectAtomicUpdates(db: Db): Promise<boolean> {
  const info = await db.command({ buildInfo: 1 });
  return info.ferretdbVersion === undefined;
}

/**
 * Records the partition count and schema version on first use; afterwards checks them.
 * @throws StoreConfigError when the stored partition count differs, or the schema is newer than this code
 */
export async function checkMeta(c: MongoCollections, partitions: number, dbName: string): Promise<void> {
  const version = await c.meta.findOneAndUpdate(
    { _id: 'schema_version' },
    { $setOnInsert: { value: SCHEMA_VERSION } },
    { upsert: true, returnDocument: 'after' },
  );
  if ((version?.value ?? SCHEMA_VERSION) > SCHEMA_VERSION) {
    throw new StoreConfigError(`database ${dbName} has schema version ${version?.value}, newer than this build knows (${SCHEMA_VERSION})`);
  }
  const stored = await c.meta.findOneAndUpdate(
    { _id: 'partitions' },
    { $setOnInsert: { value: partitions } },
    { upsert: true, returnDocument: 'after' },
  );
  if (stored && stored.value !== partitions) {
    throw new StoreConfigError(
      `invalid configuration: partitions (env PARTITIONS): the database ${dbName} was created with ${stored.value} partitions, not ${partitions}`,
    );
  }
}
