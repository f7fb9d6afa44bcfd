import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/**
 * JSON lets a string hold half of a UTF-16 surrogate pair (`"\ud800"`); the store keeps text as
 * UTF-8, which cannot hold it, so an id or key with one was stored as U+FFFD: `"\ud800"` and
 * `"\udfff"` became the same idempotency key or workflow-local id. Such names and keys are refused
 * (400 naming the field); payloads keep them (stored as JSON text, escapes and all), and
 * well-formed pairs (an emoji) are accepted everywhere.
 */
describe('REST: a lone UTF-16 surrogate in a name, key or id → 400 naming the field; payloads keep theirs', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(async () => f.close());

  /** POSTs a raw JSON text: `\ud800` stays an escape on the wire, as a client's JSON.stringify sends it. */
  const post = (url: string, text: string) =>
    f.app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: text });

  const lone = '\\ud800';

  async function expectRefused(url: string, text: string, field: string): Promise<void> {
    const res = await post(url, text);
    expect(res.statusCode, res.body).to.equal(400);
    const { error } = res.json();
    expect(error.code).to.equal('VALIDATION_FAILED');
    expect(error.details.field).to.equal(field);
    expect(error.details.reason).to.include('lone UTF-16 surrogate');
  }

  it('task fields, workflow ids and names, cron fields: 400 naming the field; nothing stored', async () => {
    const cases: Array<[string, string, string]> = [
      ['/api/v1/tasks', `{"task_type":"noop","idempotency_key":"k${lone}"}`, 'idempotency_key'],
      ['/api/v1/tasks', `{"task_type":"no${lone}op"}`, 'task_type'],
      ['/api/v1/tasks', `{"task_type":"noop","queue":"${lone}"}`, 'queue'],
      ['/api/v1/tasks', `{"task_type":"noop","metadata":{"correlation_id":"${lone}"}}`, 'metadata.correlation_id'],
      [
        '/api/v1/tasks/batch',
        `{"tasks":[{"task_type":"noop"},{"task_type":"noop","idempotency_key":"\\udfff"}]}`,
        'tasks[1].idempotency_key',
      ],
      ['/api/v1/workflows', `{"tasks":[{"task_id":"${lone}","task_type":"noop"}]}`, 'tasks[0].task_id'],
      [
        '/api/v1/workflows',
        `{"tasks":[{"task_id":"a","task_type":"noop"},{"task_id":"b","task_type":"noop","dependencies":["${lone}"]}]}`,
        'tasks[1].dependencies[0]',
      ],
      ['/api/v1/workflows', `{"workflow_name":"w${lone}","tasks":[{"task_id":"a","task_type":"noop"}]}`, 'workflow_name'],
      ['/api/v1/cron-tasks', `{"name":"c${lone}","cron_expression":"* * * * *","task_type":"noop"}`, 'name'],
      ['/api/v1/cron-tasks', `{"name":"c","cron_expression":"* * * * *","timezone":"UTC${lone}","task_type":"noop"}`, 'timezone'],
    ];
    for (const [url, text, field] of cases) await expectRefused(url, text, field);
    const counts = await f.store.countByState();
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).to.equal(0);
    expect((await f.app.inject({ method: 'GET', url: '/api/v1/cron-tasks' })).json().cron_tasks).to.deep.equal([]);
  });

  it('U+0000 (NUL) in a name, key or id, in a path id or a list filter: 400 naming it (PostgreSQL text cannot hold it: a 500 there)', async () => {
    const nul = '\\u0000';
    const bodies: Array<[string, string, string]> = [
      ['/api/v1/tasks', `{"task_type":"noop","idempotency_key":"k${nul}"}`, 'idempotency_key'],
      ['/api/v1/tasks', `{"task_type":"noop","queue":"q${nul}"}`, 'queue'],
      [
        '/api/v1/tasks/batch',
        `{"tasks":[{"task_type":"noop"},{"task_type":"noop","idempotency_key":"${nul}"}]}`,
        'tasks[1].idempotency_key',
      ],
      ['/api/v1/workflows', `{"workflow_name":"w${nul}","tasks":[{"task_id":"a","task_type":"noop"}]}`, 'workflow_name'],
      ['/api/v1/workflows', `{"tasks":[{"task_id":"a${nul}","task_type":"noop"}]}`, 'tasks[0].task_id'],
      ['/api/v1/cron-tasks', `{"name":"c${nul}","cron_expression":"* * * * *","task_type":"noop"}`, 'name'],
    ];
    for (const [url, text, field] of bodies) {
      const res = await post(url, text);
      expect(res.statusCode, `${url} ${res.body}`).to.equal(400);
      expect(res.json().error.details).to.deep.include({ field });
      expect(res.json().error.details.reason).to.include('U+0000');
    }
    const reads: Array<[string, string, string]> = [
      ['GET', '/api/v1/tasks/%00', 'id'],
      ['GET', '/api/v1/tasks/a%00b/attempts/1/logs', 'id'],
      ['POST', '/api/v1/tasks/%00/cancel', 'id'],
      ['GET', '/api/v1/cron-tasks/%00', 'id'],
      ['GET', '/api/v1/workflows/%00', 'id'],
      ['GET', '/api/v1/tasks?idempotency_key=%00', 'idempotency_key'],
      ['GET', '/api/v1/tasks?task_type=a%00', 'task_type'],
      ['GET', '/api/v1/dead-letter?tenant=%00', 'tenant'],
      ['GET', '/api/v1/workflows?tenant=%00', 'tenant'],
      ['GET', '/api/v1/tasks?tenant=%00', 'tenant'],
      ['GET', '/api/v1/tasks?tenant=', 'tenant'],
    ];
    for (const [method, url, field] of reads) {
      const res = await f.app.inject({ method: method as 'GET', url });
      expect(res.statusCode, `${method} ${url} ${res.body}`).to.equal(400);
      expect(res.json().error.details.field, url).to.equal(field);
    }
    // Routes whose body the service validates check their path here too (they skipped it: PostgreSQL answered 500).
    const withBodies: Array<[string, string, object, string]> = [
      ['PATCH', '/api/v1/tasks/%00', { priority: 'high' }, 'id'],
      ['POST', '/api/v1/tasks/%00/complete', { attempt: 1 }, 'id'],
      ['POST', '/api/v1/tasks/a%00/heartbeat', { attempt: 1 }, 'id'],
      ['POST', '/api/v1/tasks/%00/checkpoint', { attempt: 1, value: 1 }, 'id'],
      ['POST', '/api/v1/tasks/%00/progress', { attempt: 1, progress: 0.5 }, 'id'],
      ['POST', '/api/v1/tasks/%00/logs', { attempt: 1, lines: [{ level: 'info', msg: 'x' }] }, 'id'],
      ['PATCH', '/api/v1/cron-tasks/%00', { enabled: false }, 'id'],
      ['PUT', '/api/v1/rate-limits/%00', { rate_per_second: 1 }, 'task_type'],
      ['PUT', `/api/v1/rate-limits/${'t'.repeat(201)}`, { rate_per_second: 1 }, 'task_type'],
      ['PUT', '/api/v1/tenants/%00', { weight: 2 }, 'id'],
      ['PUT', '/api/v1/concurrency-limits/%00', { max_running: 2 }, 'key'],
      ['POST', '/api/v1/queues/%00/lease', { worker_id: 'w' }, 'queue'],
    ];
    for (const [method, url, payload, field] of withBodies) {
      const res = await f.app.inject({ method: method as 'PUT', url, payload });
      expect(res.statusCode, `${method} ${url} ${res.body}`).to.equal(400);
      expect(res.json().error.code, url).to.equal('VALIDATION_FAILED');
      expect(res.json().error.details.field, url).to.equal(field);
    }
    const counts = await f.store.countByState();
    expect(Object.values(counts).reduce((a, b) => a + b, 0)).to.equal(0);
  });

  it('well-formed pairs are accepted and read back as sent; a lone surrogate in a payload is kept', async () => {
    const text = `{"task_type":"noop","idempotency_key":"k\\ud83d\\ude00","payload":{"s":"${lone}x"}}`;
    const res = await post('/api/v1/tasks', text);
    expect(res.statusCode, res.body).to.equal(202);
    const task = (await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${res.json().task_id}` })).json();
    expect(task.idempotency_key).to.equal('k\ud83d\ude00');
    expect(task.payload).to.deep.equal({ s: '\ud800x' });
    const again = await post('/api/v1/tasks', text);
    expect(again.json().task_id, again.body).to.equal(res.json().task_id);
  });
});
