import type { Config } from '../../config';
import { CronRecord, cronInstanceId } from '../../domain/cron/cron-definition';
import { partitionOf } from '../../domain/partition';
import { NewTask } from '../../domain/task';
import { buildNewTask } from '../../services/build-task';

/**
 * The task a cron's firing creates: its template with every default from config, the
 * deterministic id `cron-<cron_id>-<fire time>`, due (and `scheduled_at`) at the fire time, the
 * definition's tenant. The template was checked when the definition was saved; the task type is
 * taken as registered here, so a handler removed from config later fails the instance (visibly)
 * instead of stopping the schedule.
 * @param fireTime scheduled fire instant (epoch ms, ≤ now)
 * @param now creation time (epoch ms)
 * @throws PayloadTooLargeError / ValidationError only if config shrank a limit since the save (not
 *   `maxMetadataBytes`, which is not applied here)
 */
export function buildCronInstance(cron: CronRecord, fireTime: number, now: number, config: Config): NewTask {
  // The metadata cap came after templates could be saved: one stored with larger metadata keeps firing.
  const limits = { ...config, maxMetadataBytes: Number.POSITIVE_INFINITY };
  const base = buildNewTask({ ...cron.template, scheduled_at: null }, '', now, limits, new Set([cron.template.task_type]));
  const id = cronInstanceId(cron.id, fireTime);
  return {
    ...base,
    id,
    partition: partitionOf(id, config.partitions),
    tenantId: cron.tenantId,
    scheduledAt: fireTime,
    dueAt: fireTime,
    state: fireTime > now ? 'SCHEDULED' : 'PENDING',
  };
}
