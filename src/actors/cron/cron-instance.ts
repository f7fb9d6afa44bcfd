import type { Config } from '../../config';
import { assertJsonSize } from '../../contract/json-size';
import { CronRecord, cronInstanceId } from '../../domain/cron/cron-definition';
import { newTask, taskFields } from '../../domain/new-task';
import { NewTask } from '../../domain/task';

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
  // The metadata cap came after templates could be saved: one stored with larger metadata keeps
  // firing; the payload cap is applied as at submission.
  assertJsonSize(cron.template.payload, config.maxPayloadBytes, 'payload');
  const fields = taskFields(cron.template, fireTime, config.defaults);
  return {
    ...newTask({ ...fields, tenantId: cron.tenantId }, { now, partitions: config.partitions, id: cronInstanceId(cron.id, fireTime) }),
    dueAt: fireTime,
    state: fireTime > now ? 'SCHEDULED' : 'PENDING',
  };
}
