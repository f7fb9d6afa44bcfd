/**
 * The cron part of the {@link Store} contract (docs/DESIGN.md §7). Every adapter implements it; the
 * conformance suite (test/storage/conformance/cron.ts) checks it.
 */
import type {
  CatchUpMode,
  CronFireRecord,
  CronRecord,
  FireOutcome,
  OverlapPolicy,
  SkipReason,
  TaskTemplate,
} from '../domain/cron/cron-definition';
import type { DueEntry, NewTask, TaskState } from '../domain/task';

/** Fields of a definition an edit may change; `nextFireTime` is recomputed by the caller. */
export interface CronChanges {
  name?: string;
  cronExpression?: string;
  timezone?: string;
  template?: TaskTemplate;
  overlapPolicy?: OverlapPolicy;
  catchUp?: CatchUpMode;
  maxCatchUp?: number;
  enabled?: boolean;
  nextFireTime?: number | null;
  /**
   * Not a field: when set, the edit applies only if the stored version is this one (a
   * compare-and-set; `updateCron` answers null otherwise, as for a missing definition). Edits read,
   * merged and written back through several nodes at once then never undo each other.
   */
  ifVersion?: number;
}

/** One firing to apply: its record and, unless skipped, the instance to create. */
export interface PlannedInstance {
  fireTime: number;
  outcome: FireOutcome;
  reason: SkipReason | null;
  /** The instance (id `cron-<cron_id>-<fireTime>`); null for a skipped firing. */
  task: NewTask | null;
}

/** What an evaluator asks the store to do for one due cron. */
export interface CronFiring {
  cronId: string;
  /** Compare-and-set: applied only while the stored next_fire_time and version are these. */
  expectedNextFireTime: number;
  expectedVersion: number;
  /** The new next_fire_time (null: never again). */
  nextFireTime: number | null;
  overlapPolicy: OverlapPolicy;
  /** Most BLOCKED instances a `queue` cron may hold; beyond, firings are skipped (`queue_full`). */
  maxQueued: number;
  /** In fire-time order. */
  instances: PlannedInstance[];
}

/** Outcome of one {@link CronFiring}. */
export interface CronFiringResult {
  cronId: string;
  /** False when the compare-and-set failed (another evaluator fired, or the definition changed). */
  applied: boolean;
  /** New instances ready to run (PENDING), for their partition owners. */
  entries: DueEntry[];
  /** RUNNING instances whose cancel was requested (`cancel_running`): abort their handlers. */
  aborts: Array<{ taskId: string; attempt: number }>;
  /** The fire records written (an overlap may turn a planned creation into a skip). */
  records: CronFireRecord[];
}

/** A fire record with the current state of its instance. */
export interface CronFireView extends CronFireRecord {
  taskState: TaskState | null;
}

export interface CronListQuery {
  tenantId?: string;
  enabled?: boolean;
  /** 1..1000 */
  limit: number;
  cursor?: string;
}

export interface CronStore {
  /** Stores a new definition. @throws on a duplicate id */
  createCron(cron: CronRecord): Promise<void>;
  getCron(id: string): Promise<CronRecord | null>;
  /** Newest first. */
  listCrons(query: CronListQuery): Promise<{ crons: CronRecord[]; nextCursor: string | null }>;
  /**
   * Applies `changes`, increments the version. @returns the definition after the edit, or null if
   * none (or, with `changes.ifVersion`, none at that version)
   */
  updateCron(id: string, changes: CronChanges, now: number): Promise<CronRecord | null>;
  /** Deletes a definition and its fire records (its instances stay, as ordinary tasks). */
  deleteCron(id: string): Promise<boolean>;
  /** Enabled definitions whose next fire time is at or before `until`, earliest first. */
  loadDueCrons(until: number, limit: number): Promise<CronRecord[]>;
  /**
   * Applies firings, each atomically and independently: compare-and-set of next_fire_time and
   * version, then, per planned instance in order, the overlap policy against the cron's live
   * instances, the instance insert and the fire record. A second evaluator firing the same instant
   * changes nothing (its compare-and-set fails; instance ids and fire records are unique too).
   */
  fireCrons(firings: CronFiring[], now: number): Promise<CronFiringResult[]>;
  /** Fire records of a cron, latest fire time first; the cursor is opaque. */
  listCronFires(cronId: string, query: { limit: number; cursor?: string }): Promise<{ fires: CronFireView[]; nextCursor: string | null }>;
  /** Crons that hold BLOCKED (queued) instances. */
  cronsWithQueuedInstances(limit: number): Promise<string[]>;
  /**
   * For each cron with no live instance but BLOCKED (queued) ones: its oldest queued instance
   * becomes PENDING. @returns the released instances
   */
  releaseQueuedInstances(cronIds: string[], now: number): Promise<DueEntry[]>;
  /** Deletes up to `limit` fire records with a fire time before `before`, oldest first. @returns how many */
  purgeCronFires(before: number, limit: number): Promise<number>;
}
