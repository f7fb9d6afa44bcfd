import { expect } from 'chai';
import { http, waitForTask, waitForWorkflow } from '../helpers/http';
import { ServiceProcess, useServiceProcess } from '../helpers/service-process';

/**
 * Workflows (issue 6, DESIGN §8) on the real service process: DAGs run in dependency order with
 * their upstream results, failures cancel what is downstream and nothing else, a replay from the
 * dead-letter queue resumes the descendants, a cancel stops everything.
 */
describe('workflows end to end (real process, SQLite, forked workers)', function () {
  this.timeout(90_000);
  const fixture = useServiceProcess({ WORKERS: '2', WORKER_CONCURRENCY: '8' });
  let svc: ServiceProcess;
  before(() => {
    svc = fixture.svc;
  });

  async function submit(body: unknown): Promise<{ workflowId: string; ids: Record<string, string> }> {
    const res = await http('POST', `${svc.url}/api/v1/workflows`, body);
    if (res.status !== 202) throw new Error(`workflow submit answered ${res.status}: ${JSON.stringify(res.body)}`);
    return { workflowId: res.body.workflow_id, ids: res.body.task_ids };
  }

  const byId = (wf: any) => Object.fromEntries(wf.task_details.map((t: any) => [t.workflow_task_id, t]));
  /** Every task started after all its dependencies completed. */
  function expectDependencyOrder(wf: any) {
    const tasks = byId(wf);
    for (const t of wf.task_details) {
      if (!t.started_at) continue;
      for (const d of t.dependencies) {
        expect(Date.parse(t.started_at), `${t.workflow_task_id} started before ${d} completed`).to.be.at.least(
          Date.parse(tasks[d].completed_at),
        );
      }
    }
  }

  it('the onboarding DAG runs in dependency order; notify-sales sees both upstream results', async () => {
    const { workflowId, ids } = await submit({
      workflow_name: 'onboarding',
      tasks: [
        { task_id: 'create-account', task_type: 'echo', payload: { account: 'acme-1' } },
        { task_id: 'send-welcome-email', task_type: 'echo', payload: { email: 'sent' }, dependencies: ['create-account'] },
        { task_id: 'setup-defaults', task_type: 'echo', payload: { defaults: 'ok' }, dependencies: ['create-account'] },
        {
          task_id: 'notify-sales',
          task_type: 'echo',
          payload: { include_upstream_results: true },
          dependencies: ['send-welcome-email', 'setup-defaults'],
        },
      ],
      metadata: { tenant_id: 'acme' },
    });
    const wf = await waitForWorkflow(svc.url, workflowId);
    expect(wf.status).to.equal('SUCCEEDED');
    expect(wf.completed_at).to.be.a('string');
    expect(wf.task_counts).to.include({ SUCCEEDED: 4 });
    expect(wf.tasks).to.deep.equal(Object.fromEntries(Object.keys(ids).map((k) => [k, 'SUCCEEDED'])));
    expect(wf.task_ids).to.deep.equal(ids);
    expectDependencyOrder(wf);
    for (const t of wf.task_details) expect(t.attempts, t.workflow_task_id).to.equal(1);
    const notify = await waitForTask(svc.url, ids['notify-sales'], (t) => t.status === 'SUCCEEDED');
    expect(notify.result.upstream_results).to.deep.equal({ 'send-welcome-email': { email: 'sent' }, 'setup-defaults': { defaults: 'ok' } });
    expect(Date.parse(wf.completed_at)).to.be.at.least(Date.parse(notify.completed_at));
  });

  it('C5: A → {B fails permanently, C} → D → E: D and E CANCELLED (upstream_failed), C finishes, the workflow FAILED', async () => {
    const { workflowId, ids } = await submit({
      tasks: [
        { task_id: 'A', task_type: 'echo', payload: 'a' },
        { task_id: 'B', task_type: 'fail', payload: { permanent: true, message: 'card declined' }, dependencies: ['A'] },
        { task_id: 'C', task_type: 'sleep', payload: { ms: 300 }, dependencies: ['A'] },
        { task_id: 'D', task_type: 'echo', dependencies: ['B', 'C'] },
        { task_id: 'E', task_type: 'echo', dependencies: ['D'] },
      ],
    });
    const wf = await waitForWorkflow(svc.url, workflowId);
    expect(wf.status).to.equal('FAILED');
    const t = byId(wf);
    expect([t.A.status, t.B.status, t.C.status, t.D.status, t.E.status]).to.deep.equal([
      'SUCCEEDED',
      'FAILED',
      'SUCCEEDED',
      'CANCELLED',
      'CANCELLED',
    ]);
    expect(t.D.error).to.include({ type: 'upstream_failed' });
    expect(t.E.error).to.include({ type: 'upstream_failed' });
    expect(wf.task_counts).to.include({ PENDING: 0, BLOCKED: 0, RUNNING: 0, SCHEDULED: 0, RETRYING: 0 });
    expect((await http('GET', `${svc.url}/api/v1/tasks/${ids.D}`)).body.error.type).to.equal('upstream_failed');
    // The workflow finished with its last task (C), not later.
    expect(wf.completed_at).to.equal(t.C.completed_at);
    expect((await http('GET', `${svc.url}/api/v1/audit`)).body.blocked_limbo.count).to.equal(0);
  });

  it('C6a: a diamond is accepted and D runs once, after B and C', async () => {
    const { workflowId } = await submit({
      tasks: [
        { task_id: 'A', task_type: 'noop' },
        { task_id: 'B', task_type: 'sleep', payload: { ms: 50 }, dependencies: ['A'] },
        { task_id: 'C', task_type: 'sleep', payload: { ms: 150 }, dependencies: ['A'] },
        { task_id: 'D', task_type: 'echo', payload: { include_upstream_results: true }, dependencies: ['B', 'C'] },
      ],
    });
    const wf = await waitForWorkflow(svc.url, workflowId);
    expect(wf.status).to.equal('SUCCEEDED');
    expectDependencyOrder(wf);
    expect(byId(wf).D.attempts).to.equal(1);
  });

  it('C6f: one task depending on 5,000 others runs once, last, and sees all 5,000 results', async () => {
    const roots = Array.from({ length: 5_000 }, (_, i) => ({ task_id: `r${i}`, task_type: 'echo', payload: i }));
    const { workflowId, ids } = await submit({
      tasks: [
        ...roots,
        { task_id: 'sink', task_type: 'echo', payload: { include_upstream_results: true }, dependencies: roots.map((r) => r.task_id) },
      ],
    });
    // Wait on the sink (a small read) rather than polling the 5,001-task workflow view.
    const sink = await waitForTask(svc.url, ids.sink, (t) => t.status === 'SUCCEEDED', 60_000);
    const wf = await waitForWorkflow(svc.url, workflowId);
    expect(wf.status).to.equal('SUCCEEDED');
    expect(sink.attempts).to.equal(1);
    const lastRoot = Math.max(
      ...wf.task_details.filter((t: any) => t.workflow_task_id !== 'sink').map((t: any) => Date.parse(t.completed_at)),
    );
    expect(Date.parse(sink.started_at)).to.be.at.least(lastRoot);
    expect(Object.keys(sink.result.upstream_results)).to.have.length(5_000);
    expect(sink.result.upstream_results.r4999).to.equal(4999);
  });

  it('a retry does not restart upstream; replaying a DEAD task from the dead-letter queue resumes its descendants', async () => {
    const { workflowId, ids } = await submit({
      tasks: [
        { task_id: 'A', task_type: 'echo', payload: 'a' },
        {
          task_id: 'flaky',
          task_type: 'fail',
          payload: { times: 1 },
          max_retries: 1,
          retry_backoff: 'fixed',
          retry_delay_seconds: 0,
          dependencies: ['A'],
        },
        { task_id: 'B', task_type: 'fail', payload: { times: 1 }, max_retries: 0, dependencies: ['A'] },
        { task_id: 'C', task_type: 'echo', dependencies: ['A'] },
        { task_id: 'D', task_type: 'echo', payload: { include_upstream_results: true }, dependencies: ['B', 'C'] },
        { task_id: 'E', task_type: 'echo', dependencies: ['D'] },
      ],
    });
    const failed = await waitForWorkflow(svc.url, workflowId);
    expect(failed.status).to.equal('FAILED');
    let t = byId(failed);
    expect([t.B.status, t.D.status, t.E.status]).to.deep.equal(['DEAD', 'CANCELLED', 'CANCELLED']);
    expect(t.flaky).to.include({ status: 'SUCCEEDED', attempts: 2 });
    expect(t.A.attempts).to.equal(1); // the retry of "flaky" did not run A again

    const replay = await http('POST', `${svc.url}/api/v1/dead-letter/${ids.B}/replay`);
    expect(replay.status).to.equal(200);
    const done = await waitForWorkflow(svc.url, workflowId, (w) => w.status !== 'RUNNING' && w.status !== 'FAILED');
    expect(done.status).to.equal('SUCCEEDED');
    t = byId(done);
    expect([t.B.status, t.D.status, t.E.status]).to.deep.equal(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
    expect(t.A.attempts).to.equal(1);
    expect(t.C.attempts).to.equal(1);
    expectDependencyOrder(done);
    const d = await waitForTask(svc.url, ids.D, (x) => x.status === 'SUCCEEDED');
    expect(d.result.upstream_results).to.have.keys('B', 'C');
  });

  it('cancel: the RUNNING task gets its abort signal, the rest are cancelled, the workflow ends CANCELLED', async () => {
    const { workflowId, ids } = await submit({
      tasks: [
        { task_id: 'long', task_type: 'sleep', payload: { ms: 30_000 } },
        { task_id: 'next', task_type: 'echo', dependencies: ['long'] },
      ],
    });
    await waitForTask(svc.url, ids.long, (x) => x.status === 'RUNNING');
    const res = await http('POST', `${svc.url}/api/v1/workflows/${workflowId}/cancel`);
    expect(res.status).to.equal(202);
    expect(res.body.running_task_ids).to.deep.equal([ids.long]);
    const wf = await waitForWorkflow(svc.url, workflowId);
    expect(wf.status).to.equal('CANCELLED');
    const t = byId(wf);
    expect(t.long.status).to.equal('CANCELLED');
    expect(t.next.status).to.equal('CANCELLED');
    expect(Date.parse(t.long.completed_at) - Date.parse(t.long.started_at)).to.be.below(30_000);
  });

  it('GET /api/v1/workflows lists them, newest first', async () => {
    const res = await http('GET', `${svc.url}/api/v1/workflows?limit=2`);
    expect(res.status).to.equal(200);
    expect(res.body.workflows).to.have.length(2);
    expect(res.body.next_cursor).to.be.a('string');
  });
});
