import { CatchUpMode, CronRecord, FireOutcome, OverlapPolicy, SkipReason, TaskTemplate } from '../domain/cron/cron-definition';
import { TaskState } from '../domain/task';
import { CronFireView } from '../storage/cron-store';
import { iso } from './task-json';

/**
 * A cron definition as the cron routes answer it (response schema `cronSchema`,
 * api/openapi/responses.ts): its definition fields and the task template's fields side by side,
 * times ISO-8601 UTC.
 */
export interface CronView extends Omit<TaskTemplate, 'metadata'> {
  cron_id: string;
  name: string;
  cron_expression: string;
  timezone: string;
  /** The template's metadata with the definition's tenant. */
  metadata: Record<string, unknown> & { tenant_id: string };
  overlap_policy: OverlapPolicy;
  catch_up: CatchUpMode;
  max_catch_up: number;
  enabled: boolean;
  /** `enabled` as the specification spells it. */
  status: 'ACTIVE' | 'PAUSED';
  /** Null while paused, or when the expression never fires again. */
  next_fire_time: string | null;
  last_fire_time: string | null;
  created_at: string;
  updated_at: string;
  /** With `preview=N` only: the next N fire times. */
  next_fire_times?: string[];
}

/** A page of cron definitions (`GET /api/v1/cron-tasks`). */
export interface CronPageView {
  cron_tasks: CronView[];
  next_cursor: string | null;
}

/** One fire record (`GET /api/v1/cron-tasks/{id}/runs`). */
export interface CronRunView {
  fire_time: string;
  outcome: FireOutcome;
  /** Why it was skipped (`outcome` skipped only). */
  reason: SkipReason | null;
  /** The instance created (null when skipped). */
  task_id: string | null;
  /** The instance's current status (null: none, or deleted). */
  status: TaskState | null;
  recorded_at: string;
}

/** A page of fire records, latest first. */
export interface CronRunPageView {
  runs: CronRunView[];
  next_cursor: string | null;
}

/** `POST /api/v1/cron-tasks/preview`: fire instants in UTC and the schedule rules in words. */
export interface CronPreviewView {
  cron_expression: string;
  timezone: string;
  from: string;
  fire_times: string[];
  rules: string[];
}

/**
 * The API's view of a cron definition (snake_case, ISO-8601 UTC times). `status` is the
 * specification's spelling of `enabled`: `ACTIVE` or `PAUSED`.
 */
export function cronJson(c: CronRecord, preview?: number[]): CronView {
  return {
    cron_id: c.id,
    name: c.name,
    cron_expression: c.cronExpression,
    timezone: c.timezone,
    ...c.template,
    metadata: { ...(c.template.metadata ?? {}), tenant_id: c.tenantId },
    overlap_policy: c.overlapPolicy,
    catch_up: c.catchUp,
    max_catch_up: c.maxCatchUp,
    enabled: c.enabled,
    status: c.enabled ? 'ACTIVE' : 'PAUSED',
    next_fire_time: c.enabled ? iso(c.nextFireTime) : null,
    last_fire_time: iso(c.lastFireTime),
    created_at: iso(c.createdAt),
    updated_at: iso(c.updatedAt),
    ...(preview ? { next_fire_times: preview.map((t) => iso(t)) } : {}),
  };
}

/** One fire record: fire time, outcome, skip reason, the instance and its current status. */
export function fireJson(f: CronFireView): CronRunView {
  return {
    fire_time: iso(f.fireTime),
    outcome: f.outcome,
    reason: f.reason,
    task_id: f.taskId,
    status: f.taskState,
    recorded_at: iso(f.recordedAt),
  };
}
