import { expect } from 'chai';
import { SchedulerClient } from '../../src/client/scheduler-client';
import { RemoteSchedulerError } from '../../src/contract/error-catalog';
import { useInProcessScheduler } from '../helpers/in-process-scheduler';

/**
 * The workflow operations on the actor-message API: an actor of the scheduler's own system submits,
 * reads, lists and cancels workflows through SchedulerClient, with the same errors as REST.
 */
describe('actor message API: workflows through SchedulerClient', function () {
  this.timeout(30_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 4 });

  class WorkflowCaller {
    private client: SchedulerClient | null = null;
    initialize(self: { getCustomParameters(): { api: any } }) {
      this.client = new SchedulerClient(self.getCustomParameters().api);
    }
    async runDiamond() {
      const client = this.client as SchedulerClient;
      const ack = await client.submitWorkflow({
        workflow_name: 'via-actors',
        tasks: [
          { task_id: 'a', task_type: 'echo', payload: 'A' },
          { task_id: 'b', task_type: 'echo', payload: 'B', dependencies: ['a'] },
          { task_id: 'c', task_type: 'echo', payload: { include_upstream_results: true }, dependencies: ['a', 'b'] },
        ],
      });
      for (;;) {
        const wf = await client.getWorkflow(ack.workflow_id);
        if (wf.status !== 'RUNNING') {
          const c = await client.get(ack.task_ids.c);
          const listed = await client.listWorkflows({ status: 'SUCCEEDED' });
          return { ack, wf, c, listed: listed.workflows.map((w) => w.workflow_id) };
        }
        await new Promise((r) => setTimeout(r, 10)); // waiting for the workflow's state, not for time
      }
    }
    async errors() {
      const client = this.client as SchedulerClient;
      const codeOf = async (op: () => Promise<unknown>) => {
        try {
          await op();
          return null;
        } catch (err) {
          const e = err as RemoteSchedulerError;
          return { code: e.code, status: e.status, details: e.details };
        }
      };
      return {
        cycle: await codeOf(() =>
          client.submitWorkflow({
            tasks: [
              { task_id: 'x', task_type: 'noop', dependencies: ['y'] },
              { task_id: 'y', task_type: 'noop', dependencies: ['x'] },
            ],
          }),
        ),
        missing: await codeOf(() => client.getWorkflow('nope')),
        cancelMissing: await codeOf(() => client.cancelWorkflow('nope')),
      };
    }
    async cancelLater() {
      const client = this.client as SchedulerClient;
      const ack = await client.submitWorkflow({
        tasks: [{ task_id: 'later', task_type: 'noop', scheduled_at: new Date(Date.now() + 60_000).toISOString() }],
      });
      return client.cancelWorkflow(ack.workflow_id);
    }
  }

  it('submits a workflow, waits for it, lists, cancels and gets catalog errors', async () => {
    const caller = await s.scheduler.runtime.root.createChild(WorkflowCaller, {
      mode: 'in-memory',
      name: 'workflow-caller',
      customParameters: { api: s.scheduler.apiActor },
    });
    const r = await caller.sendAndReceive('runDiamond');
    expect(r.wf.status).to.equal('SUCCEEDED');
    expect(r.c.result.upstream_results).to.deep.equal({ a: 'A', b: 'B' });
    expect(r.listed).to.include(r.ack.workflow_id);

    const e = await caller.sendAndReceive('errors');
    expect(e.cycle).to.deep.include({ code: 'INVALID_WORKFLOW', status: 400 });
    expect(e.cycle.details.cycle).to.deep.equal(['x', 'y']);
    expect(e.missing).to.deep.include({ code: 'WORKFLOW_NOT_FOUND', status: 404 });
    expect(e.cancelMissing).to.deep.include({ code: 'WORKFLOW_NOT_FOUND', status: 404 });

    const cancelled = await caller.sendAndReceive('cancelLater');
    expect(cancelled).to.include({ status: 'CANCELLED', cancel_requested: true });
    await caller.destroy();
  });
});
