import { expect } from 'chai';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

/**
 * An expression that can never fire is refused with 400 CRON_NEVER_FIRES naming
 * `cron_expression`, on create, PATCH and preview; nothing is stored or changed. Manual clock at
 * 2026-06-01T12:00Z.
 */
describe('REST: cron expressions that can never fire', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(async () => f.close());

  const send = (method: 'POST' | 'PATCH' | 'GET', url: string, payload?: unknown) =>
    f.app.inject({ method, url, ...(payload === undefined ? {} : { payload: payload as object }) });
  const create = (cron_expression: string) => send('POST', '/api/v1/cron-tasks', { name: 'n', cron_expression, task_type: 'noop' });
  const NEVER = ['0 0 30 2 *', '0 0 31 4 *', '0 0 31 2,4,6,9,11 *', '0 0 0 30 FEB ?'];

  function expectNeverFires(res: Awaited<ReturnType<typeof send>>, expression: string) {
    expect(res.statusCode, res.body).to.equal(400);
    const { code, message, details } = res.json().error;
    expect(code).to.equal('CRON_NEVER_FIRES');
    expect(details).to.deep.equal({ field: 'cron_expression', cron_expression: expression });
    expect(message).to.include('can never fire');
  }

  it('create: 400, nothing stored, the evaluator not told', async () => {
    for (const e of NEVER) expectNeverFires(await create(e), e);
    for (const e of NEVER)
      expectNeverFires(await send('POST', '/api/v1/cron-tasks?preview=3', { name: 'n', cron_expression: e, task_type: 'noop' }), e);
    expect((await send('GET', '/api/v1/cron-tasks')).json().cron_tasks).to.deep.equal([]);
    expect(await f.store.listCrons({ limit: 10 }))
      .to.include({ nextCursor: null })
      .and.have.property('crons')
      .that.deep.equals([]);
    expect(f.cronsChanged).to.deep.equal([]);
  });

  it('PATCH to one: 400 and the definition unchanged; other edits of a stored one are untouched by the check', async () => {
    const cron = (await create('0 9 * * *')).json();
    f.clock.advance(1_000);
    for (const e of NEVER)
      expectNeverFires(await send('PATCH', `/api/v1/cron-tasks/${cron.cron_id}`, { cron_expression: e, enabled: false }), e);
    const after = (await send('GET', `/api/v1/cron-tasks/${cron.cron_id}`)).json();
    expect(after).to.deep.equal(cron);
    expect(f.cronsChanged).to.deep.equal([cron.cron_id]);

    // A definition saved before this check keeps reading and editing (it has no fire time).
    await f.store.updateCron(cron.cron_id, { cronExpression: '0 0 30 2 *', nextFireTime: null }, f.clock.now());
    const renamed = await send('PATCH', `/api/v1/cron-tasks/${cron.cron_id}`, { name: 'kept' });
    expect(renamed.statusCode, renamed.body).to.equal(200);
    expect(renamed.json()).to.include({ name: 'kept', cron_expression: '0 0 30 2 *', next_fire_time: null });
    expect((await send('GET', `/api/v1/cron-tasks/${cron.cron_id}?preview=2`)).json().next_fire_times).to.deep.equal([]);
  });

  it('preview: 400', async () => {
    for (const e of NEVER)
      expectNeverFires(await send('POST', '/api/v1/cron-tasks/preview', { cron_expression: e, timezone: 'Europe/Berlin' }), e);
  });

  it('a syntax error stays VALIDATION_FAILED; the refusal comes after the expression parses', async () => {
    const res = await create('0 0 32 2 *');
    expect(res.json().error).to.deep.include({ code: 'VALIDATION_FAILED' });
    expect(res.json().error.details.field).to.equal('cron_expression');
  });

  it('these fire and are accepted: a leap day, the 31st, and 30 February OR Mondays', async () => {
    const cases: Array<[string, string]> = [
      ['0 0 29 2 *', '2028-02-29T00:00:00.000Z'],
      ['0 0 31 * *', '2026-07-31T00:00:00.000Z'],
      ['0 0 30 2 MON', '2027-02-01T00:00:00.000Z'],
    ];
    for (const [e, next] of cases) {
      const res = await create(e);
      expect(res.statusCode, `${e}: ${res.body}`).to.equal(201);
      expect(res.json().next_fire_time, e).to.equal(next);
      const preview = await send('POST', '/api/v1/cron-tasks/preview', { cron_expression: e, count: 1 });
      expect(preview.json().fire_times, e).to.deep.equal([next]);
    }
  });
});
