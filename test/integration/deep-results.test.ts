import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/**
 * A handler result thousands of levels deep (within JSON.stringify's own recursion limit) used to
 * overflow the stack where the dispatcher handed its completion to the store's thread: that
 * completion batch was retried forever, so the tasks beside it stayed RUNNING and ran again after a
 * restart; as an upstream result it broke the `run` messages of its dependents and of the attempts
 * sent with them (`worker_lost`). The worker now ends such an attempt `result_too_deep`, as the
 * payload bound (64 levels) would refuse it at submission.
 */
describe('worker: a handler result nested thousands of levels deep', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 64, partitions: 4 }, (dir) => {
    const deep = path.join(dir, 'deep.js');
    fs.writeFileSync(deep, 'module.exports = (p) => { let v = 0; for (let i = 0; i < p.depth; i++) v = [v]; return v; };\n');
    return { handlers: { deep } };
  });

  it('fails that one task (FAILED, result_too_deep, one attempt); the tasks beside it and its workflow go on', async () => {
    const plain = Array.from({ length: 200 }, (_, i) => s.scheduler.service.submit({ task_type: 'echo', payload: i }));
    const deepTask = s.scheduler.service.submit({ task_type: 'deep', payload: { depth: 3500 }, max_retries: 3 });
    const more = Array.from({ length: 200 }, (_, i) => s.scheduler.service.submit({ task_type: 'echo', payload: 200 + i }));
    const flow = await s.scheduler.workflows.submit({
      workflow_name: 'deep-upstream',
      tasks: [
        { task_id: 'a', task_type: 'deep', payload: { depth: 3000 }, dependencies: [] },
        { task_id: 'b', task_type: 'echo', payload: { include_upstream_results: true }, dependencies: ['a'] },
        { task_id: 'c', task_type: 'echo', payload: {}, dependencies: [] },
      ],
    });
    const d = await s.waitFor((await deepTask).task_id, terminal);
    expect(d).to.include({ status: 'FAILED', attempts: 1 });
    expect(d.attempt_history[0].error).to.include({ type: 'result_too_deep' });
    expect(d.attempt_history[0].error.message).to.contain('64 levels');
    for (const ack of await Promise.all([...plain, ...more])) {
      expect(await s.waitFor(ack.task_id, terminal), ack.task_id).to.include({ status: 'SUCCEEDED', attempts: 1 });
    }
    const a = await s.waitFor(flow.task_ids.a, terminal);
    expect(a).to.include({ status: 'FAILED', attempts: 1 });
    expect(a.attempt_history[0].error).to.include({ type: 'result_too_deep' });
    expect(await s.waitFor(flow.task_ids.c, terminal)).to.include({ status: 'SUCCEEDED', attempts: 1 });
    const b = await s.waitFor(flow.task_ids.b, terminal);
    expect(b.status, 'a dependent of a failed task never runs').to.not.equal('SUCCEEDED');
    expect(b.attempts).to.equal(0);
  });
});
