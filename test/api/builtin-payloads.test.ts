import { expect } from 'chai';
import { SchemaValidator } from '../../src/contract/validation';
import { PayloadChecks } from '../../src/handlers/payload-schemas';
import { apiFixture, ApiFixture, sendJson } from '../helpers/api-fixture';

/**
 * A built-in type's payload is checked when it is submitted (single, batch, workflow, cron
 * template, PATCH): 400 naming the field, nothing stored, instead of a task that is accepted and
 * then FAILS when it runs.
 */
describe('REST: payloads of the built-in task types are checked at submission', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(async () => f.close());

  const send = (method: 'POST' | 'PATCH', url: string, body: unknown) => sendJson(f, method, url, body);
  const refusal = async (res: { statusCode: number; body: string; json(): any }) => {
    expect(res.statusCode, res.body).to.equal(400);
    const e = res.json().error;
    expect(e.code).to.equal('VALIDATION_FAILED');
    return { field: e.details.field as string, message: e.message as string };
  };
  const stored = async () => Object.values(await f.store.countByState()).reduce((a, b) => a + b, 0);

  it('single submissions: the field is named and nothing is stored', async () => {
    const cases: Array<[string, unknown, string, RegExp]> = [
      ['sleep', { ms: -1 }, 'payload.ms', /must be >= 0/],
      ['sleep', { ms: 86_400_001 }, 'payload.ms', /must be <= 86400000/],
      ['sleep', { ms: '500' }, 'payload.ms', /must be a number or null/],
      ['sleep', [500], 'payload', /must be a JSON object or null/],
      ['fail', { times: 'twice' }, 'payload.times', /must be a number/],
      ['fail', { permanent: 'yes' }, 'payload.permanent', /must be true or false/],
      ['http', {}, 'payload.url', /is required/],
      ['http', null, 'payload', /must be a JSON object/],
      ['http', { url: 'not a url' }, 'payload.url', /not a valid URL/],
      ['http', { url: 'ftp://example.com/x' }, 'payload.url', /http or https/],
      ['http', { url: 'http://example.com', method: 'PO ST' }, 'payload.method', /HTTP method name/],
      ['http', { url: 'http://example.com', method: 'trace' }, 'payload.method', /TRACE cannot be sent/],
      ['http', { url: 'http://example.com', method: 'CONNECT' }, 'payload.method', /CONNECT cannot be sent/],
      ['http', { url: 'http://example.com', method: 'Track' }, 'payload.method', /TRACK cannot be sent/],
      ['http', { url: 'http://example.com', headers: { 'bad header': 'x' } }, 'payload.headers', /header/i],
      ['http', { url: 'http://example.com', headers: { a: 1 } }, 'payload.headers.a', /must be a string/],
    ];
    for (const [task_type, payload, field, message] of cases) {
      const r = await refusal(await send('POST', '/api/v1/tasks', { task_type, payload }));
      expect(r.field, `${task_type} ${JSON.stringify(payload)}`).to.equal(field);
      expect(r.message).to.match(message);
    }
    expect(await stored()).to.equal(0);
  });

  it('payloads the handlers take are accepted; noop and echo take any payload', async () => {
    const ok: Array<[string, unknown]> = [
      ['sleep', { ms: 0 }],
      ['sleep', {}],
      ['sleep', null],
      // Fields a handler does not read are left to it (it ignores them); null reads as absent.
      ['sleep', { ms: 100, note: 'x' }],
      ['sleep', { ms: null }],
      ['fail', { times: null, message: null, permanent: null, extra: [1] }],
      ['http', { url: 'http://example.com', headers: null, trace: 'abc' }],
      ['fail', { message: 'boom', permanent: true, times: 2 }],
      ['http', { url: 'https://example.com/hook', method: 'put', headers: { 'x-a': 'b' }, body: { any: ['thing'] } }],
      ['echo', { ms: -1, anything: [1, 'x'] }],
      ['noop', 'text'],
    ];
    for (const [task_type, payload] of ok) {
      expect((await send('POST', '/api/v1/tasks', { task_type, payload })).statusCode, `${task_type} ${JSON.stringify(payload)}`).to.equal(
        202,
      );
    }
    // Without a payload at all, sleep sleeps 0 ms.
    expect((await send('POST', '/api/v1/tasks', { task_type: 'sleep' })).statusCode).to.equal(202);
  });

  it('batches, workflows and cron templates name the task; none of them is stored', async () => {
    const batch = await refusal(
      await send('POST', '/api/v1/tasks/batch', {
        tasks: [
          { task_type: 'sleep', payload: { ms: 1 } },
          { task_type: 'sleep', payload: { ms: -5 } },
        ],
      }),
    );
    expect(batch.field).to.equal('tasks[1].payload.ms');
    const wf = await refusal(
      await send('POST', '/api/v1/workflows', {
        tasks: [
          { task_id: 'a', task_type: 'noop' },
          { task_id: 'b', task_type: 'http', payload: { url: 'mailto:x@example.com' }, dependencies: ['a'] },
        ],
      }),
    );
    expect(wf.field).to.equal('tasks[1].payload.url');
    const cron = await refusal(
      await send('POST', '/api/v1/cron-tasks', { name: 'nap', cron_expression: '* * * * *', task_type: 'sleep', payload: { ms: 'long' } }),
    );
    expect(cron.field).to.equal('payload.ms');
    expect(await stored()).to.equal(0);
    expect((await f.crons.list({})).cron_tasks).to.deep.equal([]);
  });

  it('PATCH of a waiting task checks the new payload against its own type; the task keeps its payload', async () => {
    const { task_id } = (
      await send('POST', '/api/v1/tasks', { task_type: 'sleep', payload: { ms: 10 }, scheduled_at: '2099-01-01T00:00:00Z' })
    ).json();
    const r = await refusal(await send('PATCH', `/api/v1/tasks/${task_id}`, { payload: { ms: -10 } }));
    expect(r.field).to.equal('payload.ms');
    expect((await f.service.get(task_id)).payload).to.deep.equal({ ms: 10 });
    expect((await send('PATCH', `/api/v1/tasks/${task_id}`, { payload: { ms: 20 } })).statusCode).to.equal(200);
    expect((await f.service.get(task_id)).payload).to.deep.equal({ ms: 20 });
    const echo = (await send('POST', '/api/v1/tasks', { task_type: 'echo', scheduled_at: '2099-01-01T00:00:00Z' })).json();
    expect((await send('PATCH', `/api/v1/tasks/${echo.task_id}`, { payload: { ms: -10 } })).statusCode).to.equal(200);
  });

  it('a task of an external queue is run by its consumer: its payload is not checked, on submission or PATCH', async () => {
    await f.close();
    f = await apiFixture({ redisUrl: 'redis://127.0.0.1:1', externalQueues: { ext: { leaseMs: 5000 } } });
    const res = await send('POST', '/api/v1/tasks', {
      task_type: 'http',
      queue: 'ext',
      payload: { url: 'not a url' },
      scheduled_at: '2099-01-01T00:00:00Z',
    });
    expect(res.statusCode, res.body).to.equal(202);
    expect((await send('PATCH', `/api/v1/tasks/${res.json().task_id}`, { payload: { ms: 'x' } })).statusCode).to.equal(200);
    // The same type without "queue": refused, and the answer names the pull queues as the way out.
    const missed = await send('POST', '/api/v1/tasks', { task_type: 'resize', scheduled_at: '2099-01-01T00:00:00Z' });
    expect(missed.statusCode).to.equal(400);
    const body = missed.json().error;
    expect(body.code).to.equal('UNKNOWN_TASK_TYPE');
    expect(body.details.external_queues).to.deep.equal(['ext']);
    expect(body.message).to.include('submit it with "queue" set to its queue ("ext"; docs/WORKERS.md)');
  });

  it("a cron PATCH that changes task_type checks the template's payload against the new type", async () => {
    const id = (
      await send('POST', '/api/v1/cron-tasks', { name: 'n', cron_expression: '0 * * * *', task_type: 'echo', payload: { ms: 'soon' } })
    ).json().cron_id;
    const r = await refusal(await send('PATCH', `/api/v1/cron-tasks/${id}`, { task_type: 'sleep' }));
    expect(r.field).to.equal('payload.ms');
  });

  it('a built-in name mapped to a module of your own is not checked: the module decides', () => {
    const own = new PayloadChecks({ sleep: './my-sleep.js' });
    expect(() => own.assert('sleep', { ms: -1 }, 'payload')).not.to.throw();
    expect(() => own.assert('fail', { times: 'x' }, 'tasks[2].payload')).to.throw(/^tasks\[2\]\.payload\.times: must be a number or null$/);
    expect(() => new PayloadChecks({}).assert('my_type', { anything: true }, 'payload')).not.to.throw();
  });

  it('a field named "body" is named as such, not taken for the whole value', () => {
    const schema = { type: 'object', properties: { body: { type: 'string' } } };
    expect(() => new SchemaValidator().assert(schema, { body: 1 }, 'payload')).to.throw(/^payload\.body: must be a string$/);
    expect(() => new SchemaValidator().assert(schema, 7, 'payload')).to.throw(/^payload: must be a JSON object$/);
  });
});
