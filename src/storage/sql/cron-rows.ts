import type {
  CatchUpMode,
  CronFireRecord,
  CronRecord,
  FireOutcome,
  OverlapPolicy,
  SkipReason,
  TaskTemplate,
} from '../../domain/cron/cron-definition';

/** A `cron_tasks` row as better-sqlite3 returns it. */
export interface CronRow {
  id: string;
  partition: number;
  name: string;
  cron_expression: string;
  timezone: string;
  template: string;
  tenant_id: string;
  overlap_policy: string;
  catch_up: string;
  max_catch_up: number;
  enabled: number;
  next_fire_time: number | null;
  last_fire_time: number | null;
  version: number;
  seq: number;
  created_at: number;
  updated_at: number;
}

export function cronFromRow(r: CronRow): CronRecord {
  return {
    id: r.id,
    partition: r.partition,
    name: r.name,
    cronExpression: r.cron_expression,
    timezone: r.timezone,
    template: JSON.parse(r.template) as TaskTemplate,
    tenantId: r.tenant_id,
    overlapPolicy: r.overlap_policy as OverlapPolicy,
    catchUp: r.catch_up as CatchUpMode,
    maxCatchUp: r.max_catch_up,
    enabled: r.enabled === 1,
    nextFireTime: r.next_fire_time,
    lastFireTime: r.last_fire_time,
    version: r.version,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** A `cron_fires` row. */
export interface CronFireRow {
  cron_id: string;
  fire_time: number;
  outcome: string;
  reason: string | null;
  task_id: string | null;
  recorded_at: number;
}

export function fireFromRow(r: CronFireRow): CronFireRecord {
  return {
    cronId: r.cron_id,
    fireTime: r.fire_time,
    outcome: r.outcome as FireOutcome,
    reason: r.reason as SkipReason | null,
    taskId: r.task_id,
    recordedAt: r.recorded_at,
  };
}
