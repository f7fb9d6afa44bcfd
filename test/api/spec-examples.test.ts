import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { tempDir } from '../helpers/temp-dir';
import { CREATE_CRON, SPEC_TASK_TYPES, SUBMIT_TASK, SUBMIT_WORKFLOW, TASK_VIEW_FIELDS } from './spec-examples.fixtures';

/** When the specification's examples were written: its task is scheduled for 10:00 that day. */
const SPEC_NOW = Date.parse('2024-01-15T09:00:00Z');

/**
 * The specification's examples, their bodies sent byte for byte (spec-examples.fixtures.ts),
 * through app.inject on a real SQLite store and a manual clock set to the examples' day. Their
 * task types are not built in: they are registered the way a deployment does it, with
 * `handlers` in the config file named by SCHEDULER_CONFIG.
 */
describe("REST: the specification's examples, sent byte for byte", () => {
  const dir = tempDir();
  const configFile = path.join(dir.path, 'handlers.json');
  let f: ApiFixture;

  before(() => {
    const handlers: Record<string, string> = {};
    for (const type of SPEC_TASK_TYPES) {
      handlers[type] = path.join(dir.path, `${type}.js`);
      fs.writeFileSync(handlers[type], `module.exports = async (payload) => ({ handled: ${JSON.stringify(type)}, payload });\n`);
    }
    fs.writeFileSync(configFile, JSON.stringify({ handlers }));
  });
  after(() => dir.remove());
  beforeEach(async () => {
    f = await apiFixture({}, undefined, { SCHEDULER_CONFIG: configFile });
    f.clock.set(SPEC_NOW);
  });
  afterEach(async () => f.close());

  const send = (fx: ApiFixture, method: 'POST' | 'PATCH', url: string, text: string) =>
    fx.app.inject({ method, url, headers: { 'content-type': 'application/json' }, payload: text });
  const get = (url: string) => f.app.inject({ method: 'GET', url });
  const at = (ms: number) => new Date(ms).toISOString();

  /** Runs a task's attempt to SUCCEEDED through the store, as the dispatcher and a worker would. */
  async function succeed(taskId: string, result: unknown) {
    const [claimed] = await f.store.claimTasks([taskId], 'worker-1', f.clock.now(), 60_000);
    expect(claimed, `claim of ${taskId}`).to.not.equal(undefined);
    f.clock.advance(40);
    await f.store.completeAttempts(
      [{ taskId, attempt: claimed.attempt, state: 'SUCCEEDED', retryAt: null, result, error: null, durationMs: 35 }],
      f.clock.now(),
    );
  }

  it('POST /api/v1/tasks → 202 {task_id, status: SCHEDULED, scheduled_at, created_at}', async () => {
    const res = await send(f, 'POST', '/api/v1/tasks', SUBMIT_TASK);
    expect(res.statusCode, res.body).to.equal(202);
    const ack = res.json();
    expect(ack).to.have.all.keys('task_id', 'status', 'scheduled_at', 'created_at');
    expect(ack).to.include({ status: 'SCHEDULED', scheduled_at: '2024-01-15T10:00:00.000Z', created_at: at(SPEC_NOW) });
    const again = await send(f, 'POST', '/api/v1/tasks', SUBMIT_TASK);
    expect(again.statusCode).to.equal(200); // the idempotency key answers with the same task
    expect(again.json().task_id).to.equal(ack.task_id);
  });

  it('GET /api/v1/tasks/{task_id} has the fields the specification lists, before and after a run', async () => {
    const id = (await send(f, 'POST', '/api/v1/tasks', SUBMIT_TASK)).json().task_id;
    const before = (await get(`/api/v1/tasks/${id}`)).json();
    expect(before).to.include.all.keys(...TASK_VIEW_FIELDS);
    expect(before).to.include({
      task_id: id,
      task_type: 'send_email',
      status: 'SCHEDULED',
      priority: 'high',
      attempts: 0,
      worker_id: null,
      result: null,
    });
    expect(before.metadata).to.include({ tenant_id: 'acme-corp', correlation_id: 'req-abc-123' });

    f.clock.set(Date.parse('2024-01-15T10:00:00Z'));
    await succeed(id, { sent: true });
    const after = (await get(`/api/v1/tasks/${id}`)).json();
    expect(after).to.include.all.keys(...TASK_VIEW_FIELDS);
    expect(after).to.include({
      status: 'SUCCEEDED',
      attempts: 1,
      worker_id: 'worker-1',
      duration_ms: 35,
      started_at: '2024-01-15T10:00:00.000Z',
      completed_at: '2024-01-15T10:00:00.040Z',
    });
    expect(after.result).to.deep.equal({ sent: true });
  });

  it('POST /api/v1/tasks/{task_id}/cancel → 200 {task_id, status: CANCELLED, cancelled_at}; 409 once the task is finished', async () => {
    const id = (await send(f, 'POST', '/api/v1/tasks', SUBMIT_TASK)).json().task_id;
    f.clock.advance(1_000);
    const res = await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/cancel` });
    expect(res.statusCode).to.equal(200);
    expect(res.json()).to.include({ task_id: id, status: 'CANCELLED', cancelled_at: at(f.clock.now()) });
    const twice = await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/cancel` });
    expect(twice.statusCode).to.equal(409);
    expect(twice.json().error).to.deep.include({ code: 'TASK_STATE_CONFLICT' });
    expect(twice.json().error.details.state).to.equal('CANCELLED');

    const other = (await send(f, 'POST', '/api/v1/tasks', SUBMIT_TASK.replace('welcome-email-user-123', 'welcome-email-user-124'))).json()
      .task_id;
    f.clock.set(Date.parse('2024-01-15T10:00:00Z'));
    await succeed(other, null);
    const done = await f.app.inject({ method: 'POST', url: `/api/v1/tasks/${other}/cancel` });
    expect(done.statusCode).to.equal(409);
    expect(done.json().error.details.state).to.equal('SUCCEEDED');
  });

  it('POST /api/v1/cron-tasks → 201 {cron_id, name, next_fire_time, status: ACTIVE}; PAUSED on every read while disabled', async () => {
    const res = await send(f, 'POST', '/api/v1/cron-tasks', CREATE_CRON);
    expect(res.statusCode, res.body).to.equal(201);
    const cron = res.json();
    expect(cron).to.include.all.keys('cron_id', 'name', 'next_fire_time', 'status');
    // Monday 15 January 2024, 9:00 in New York (EST, UTC−5).
    expect(cron).to.include({ name: 'daily-report', status: 'ACTIVE', overlap_policy: 'skip', next_fire_time: '2024-01-15T14:00:00.000Z' });
    const url = `/api/v1/cron-tasks/${cron.cron_id}`;

    const paused = await send(f, 'PATCH', url, '{"enabled": false}');
    expect(paused.json()).to.include({ status: 'PAUSED', enabled: false });
    expect((await get(url)).json()).to.include({ status: 'PAUSED' });
    expect((await get(`${url}?preview=2`)).json()).to.include({ status: 'PAUSED' });
    expect((await get('/api/v1/cron-tasks')).json().cron_tasks.map((c: any) => c.status)).to.deep.equal(['PAUSED']);
    expect((await send(f, 'PATCH', url, '{"enabled": true}')).json()).to.include({ status: 'ACTIVE', enabled: true });
    expect((await get(url)).json()).to.include({ status: 'ACTIVE' });
  });

  it('POST /api/v1/workflows → 202 {workflow_id, status: RUNNING, tasks: {local id: state}, task_ids}; GET shows the same maps', async () => {
    const res = await send(f, 'POST', '/api/v1/workflows', SUBMIT_WORKFLOW);
    expect(res.statusCode, res.body).to.equal(202);
    const ack = res.json();
    expect(ack).to.include({ workflow_name: 'user-onboarding', status: 'RUNNING' });
    expect(ack.workflow_id).to.be.a('string');
    expect(ack.tasks).to.deep.equal({
      'create-account': 'PENDING',
      'send-welcome-email': 'BLOCKED',
      'setup-defaults': 'BLOCKED',
      'notify-admin': 'BLOCKED',
    });
    expect(Object.keys(ack.task_ids)).to.deep.equal(Object.keys(ack.tasks));
    const created = (await get(`/api/v1/tasks/${ack.task_ids['create-account']}`)).json();
    expect(created).to.include({ task_type: 'create_account', workflow_id: ack.workflow_id, workflow_task_id: 'create-account' });

    await succeed(ack.task_ids['create-account'], { account: 1 });
    const wf = (await get(`/api/v1/workflows/${ack.workflow_id}`)).json();
    expect(wf).to.include({ workflow_id: ack.workflow_id, workflow_name: 'user-onboarding', status: 'RUNNING' });
    expect(wf.tasks).to.deep.equal({
      'create-account': 'SUCCEEDED',
      'send-welcome-email': 'PENDING',
      'setup-defaults': 'PENDING',
      'notify-admin': 'BLOCKED',
    });
    expect(wf.task_ids).to.deep.equal(ack.task_ids);
  });

  it('a task type that is not registered: 400 UNKNOWN_TASK_TYPE saying how to register one', async () => {
    const bare = await apiFixture();
    try {
      bare.clock.set(SPEC_NOW);
      for (const [url, text] of [
        ['/api/v1/tasks', SUBMIT_TASK],
        ['/api/v1/cron-tasks', CREATE_CRON],
        ['/api/v1/workflows', SUBMIT_WORKFLOW],
      ]) {
        const res = await send(bare, 'POST', url, text);
        expect(res.statusCode, url).to.equal(400);
        const { code, message, details } = res.json().error;
        expect(code, url).to.equal('UNKNOWN_TASK_TYPE');
        expect(details).to.include({ config_key: 'handlers', docs: 'docs/API.md#task-types-and-handlers' });
        expect(message).to.include('"handlers"').and.include('SCHEDULER_CONFIG').and.include('docs/API.md#task-types-and-handlers');
      }
      const docs = fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'docs', 'API.md'), 'utf8');
      expect(docs).to.match(/^## Task types and handlers$/m);
    } finally {
      await bare.close();
    }
  });

  it('sent after 2024-01-15T10:00Z, the task example is due at once: 202 PENDING, scheduled_at kept (a past time means now)', async () => {
    f.clock.set(Date.parse('2026-06-01T12:00:00Z'));
    const ack = (await send(f, 'POST', '/api/v1/tasks', SUBMIT_TASK)).json();
    expect(ack).to.include({ status: 'PENDING', scheduled_at: '2024-01-15T10:00:00.000Z' });
  });
});
