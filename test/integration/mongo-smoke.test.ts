/**
 * Smoke test of the service on the MongoDB store: the real process with SCHEDULER_STORE=mongodb
 * on a fresh database of the server named by MONGODB_URI (FerretDB in CI), an echo task submitted
 * over REST until SUCCEEDED, and a workflow (diamond) run through the dispatcher in dependency
 * order with its upstream results. Skipped without MONGODB_URI.
 */
import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { http, isTerminal, waitForTask, waitForWorkflow } from '../helpers/http';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';
import { dropDatabase, withDatabase } from '../helpers/mongo-database';

const uri = process.env.MONGODB_URI;

describe('service on the MongoDB store (real process, SCHEDULER_STORE=mongodb)', function () {
  this.timeout(60_000);
  if (!uri) {
    it.skip('needs MONGODB_URI (a MongoDB or FerretDB server; `source .ci/services.sh` starts one)', () => undefined);
    return;
  }
  const database = `smoke_${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const dir = tempDir();
  let svc: ServiceProcess | null = null;

  before(async () => {
    svc = await startServiceProcess(dir.path, { SCHEDULER_STORE: 'mongodb', MONGODB_URI: withDatabase(uri, database), WORKERS: '1' });
  });

  after(async () => {
    await svc?.stop();
    dir.remove();
    await dropDatabase(uri, database);
  });

  it('runs an echo task to SUCCEEDED and stores it in the MongoDB database', async () => {
    const payload = { hello: 'mongo', n: [1, 2, 3], 'dotted.key': true };
    const res = await http('POST', `${svc!.url}/api/v1/tasks`, { task_type: 'echo', payload });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const t = await waitForTask(svc!.url, res.body.task_id, isTerminal);
    expect(t.status).to.equal('SUCCEEDED');
    expect(t.result).to.deep.equal(payload);
    const client = new MongoClient(uri);
    try {
      await client.connect();
      const doc = await client
        .db(database)
        .collection('tasks')
        .findOne({ _id: res.body.task_id } as never);
      expect(doc?.state).to.equal('SUCCEEDED');
    } finally {
      await client.close();
    }
  });

  it('runs a workflow: roots first, the join with both upstream results, the workflow SUCCEEDED; the audit finds no limbo', async () => {
    const res = await http('POST', `${svc!.url}/api/v1/workflows`, {
      workflow_name: 'mongo-diamond',
      tasks: [
        { task_id: 'a', task_type: 'echo', payload: 'A' },
        { task_id: 'b', task_type: 'echo', payload: { b: 1 }, dependencies: ['a'] },
        { task_id: 'c', task_type: 'echo', payload: { c: 2 }, dependencies: ['a'] },
        { task_id: 'd', task_type: 'echo', payload: { include_upstream_results: true }, dependencies: ['b', 'c'] },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).to.equal(202);
    const wf = await waitForWorkflow(svc!.url, res.body.workflow_id);
    expect(wf.status).to.equal('SUCCEEDED');
    expect(wf.task_counts).to.include({ SUCCEEDED: 4 });
    const tasks = Object.fromEntries(wf.task_details.map((t: any) => [t.workflow_task_id, t]));
    for (const t of wf.task_details) {
      for (const dep of t.dependencies)
        expect(Date.parse(t.started_at), `${t.workflow_task_id} after ${dep}`).to.be.at.least(Date.parse(tasks[dep].completed_at));
    }
    const d = await waitForTask(svc!.url, tasks.d.task_id, isTerminal);
    expect(d.result.upstream_results).to.deep.equal({ b: { b: 1 }, c: { c: 2 } });
    const listed = await http('GET', `${svc!.url}/api/v1/workflows?limit=10`);
    expect(listed.body.workflows.map((w: any) => w.workflow_id)).to.deep.equal([res.body.workflow_id]);
    expect((await http('GET', `${svc!.url}/api/v1/audit`)).body.blocked_limbo.count).to.equal(0);
  });
});
