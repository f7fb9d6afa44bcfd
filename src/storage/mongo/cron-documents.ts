/**
 * Document mapping of cron definitions (`cron_tasks`) and their firings (`cron_fires`), with the
 * conventions of documents.ts (snake_case fields; the task template stored as JSON text).
 */
import type {
  CatchUpMode,
  CronFireRecord,
  CronRecord,
  FireOutcome,
  OverlapPolicy,
  SkipReason,
  TaskTemplate,
} from '../../domain/cron/cron-definition';

/** A `cron_tasks` document; `_id` is the cron id. */
export interface CronDoc {
  _id: string;
  partition: number;
  name: string;
  cron_expression: string;
  timezone: string;
  template: string;
  tenant_id: string;
  overlap_policy: string;
  catch_up: string;
  max_catch_up: number;
  enabled: boolean;
  next_fire_time: number | null;
  last_fire_time: number | null;
  version: number;
  seq: number;
  created_at: number;
  updated_at: number;
}

/** A `cron_fires` document (unique on cron_id + fire_time). */
export interface CronFireDoc {
  cron_id: string;
  fire_time: number;
  outcome: string;
  reason: string | null;
  task_id: string | null;
  recorded_at: number;
}

export function cronToDoc(c: CronRecord, seq: number): CronDoc {
  return {
    _id: c.id,
    partition: c.partition,
    name: c.name,
    cron_expression: c.cronExpression,
    timezone: c.timezone,
    template: JSON.stringify(c.template),
    tenant_id: c.tenantId,
    overlap_policy: c.overlapPolicy,
    catch_up: c.catchUp,
    max_catch_up: c.maxCatchUp,
    enabled: c.enabled,
    next_fire_time: c.nextFireTime,
    last_fire_time: c.lastFireTime,
    version: c.version,
    seq,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

export function cronFromDoc(d: CronDoc): CronRecord {
  return {
    id: d._id,
    partition: d.partition,
    name: d.name,
    cronExpression: d.cron_expression,
    timezone: d.timezone,
    template: JSON.parse(d.template) as TaskTemplate,
    tenantId: d.tenant_id,
    overlapPolicy: d.overlap_policy as OverlapPolicy,
    catchUp: d.catch_up as CatchUpMode,
    maxCatchUp: d.max_catch_up,
    enabled: d.enabled,
    nextFireTime: d.next_fire_time,
    lastFireTime: d.last_fire_time,
    version: d.version,
    createdAt: d.created_at,
    updatedAt: d.updated_at,
  };
}

export function fireFromDoc(d: CronFireDoc): CronFireRecord {
  return {
    cronId: d.cron_id,
    fireTime: d.fire_time,
    outcome: d.outcome as FireOutcome,
    reason: d.reason as SkipReason | null,
    taskId: d.task_id,
    recordedAt: d.recorded_at,
  };
}
