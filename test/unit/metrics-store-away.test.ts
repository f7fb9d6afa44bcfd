import { expect } from 'chai';
import { SchedulerMetrics } from '../../src/observability/metrics';
import { StoreUnavailableError } from '../../src/domain/errors';
import { TaskState } from '../../src/domain/task';

describe('SchedulerMetrics: a scrape while the store is away', () => {
  it('answers with every other series; the depth gauges have no samples or keep their last value (it was a 503 with none)', async () => {
    let away = false;
    const counts = { DEAD: 3, OVERFLOW: 1, PENDING: 7 } as Record<TaskState, number>;
    const metrics = new SchedulerMetrics(async () => {
      if (away) throw new StoreUnavailableError('connection_lost', 'postgres://h/db', 'ECONNREFUSED', true);
      return counts;
    });
    metrics.submitted.inc({ task_type: 'echo' }, 2);
    expect(await metrics.registry.metrics()).to.include('scheduler_tasks{state="PENDING"} 7');
    away = true;
    const text = await metrics.registry.metrics();
    expect(text).to.include('scheduler_tasks_submitted_total{task_type="echo"} 2');
    expect(text).to.include('scheduler_dead_letter_tasks 3'); // the last value read
    expect(text).to.include('scheduler_overflow_tasks 1');
  });
});
