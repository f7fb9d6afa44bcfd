import { CronRecord } from '../domain/cron/cron-definition';
import { CronFireView } from '../storage/cron-store';
import { iso } from './task-json';

/**
 * The API's view of a cron definition (snake_case, ISO-8601 UTC times). `status` is the
 * specification's spelling of `enabled`: `ACTIVE` or `PAUSED`.
 */
export function cronJson(c: CronRecord, preview?: number[]): Record<string, unknown> {
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
export function fireJson(f: CronFireView): Record<string, unknown> {
  return {
    fire_time: iso(f.fireTime),
    outcome: f.outcome,
    reason: f.reason,
    task_id: f.taskId,
    status: f.taskState,
    recorded_at: iso(f.recordedAt),
  };
}
