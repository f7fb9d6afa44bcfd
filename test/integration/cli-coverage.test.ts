import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { tempDir } from '../helpers/temp-dir';
import { sink } from '../helpers/sink';
import { buildProgram, runCli } from '../../src/cli/program';
import { ROUTE_COMMANDS } from '../../src/cli/route-commands';
import { moveClockWhileWaiting } from '../helpers/clock-while-waiting';

/** The command named by `words` (e.g. `cron runs`) in the program's tree, or undefined. */
function commandOf(program: Command, words: string): Command | undefined {
  let c: Command | undefined = program;
  for (const w of words.split(' ')) c = c?.commands.find((sub) => sub.name() === w);
  return c;
}

/** `/api/v1/tasks/{id}` → a pattern matching its concrete paths. */
const pathPattern = (template: string) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);

/**
 * Every route of the OpenAPI document has a CLI command (src/cli/route-commands.ts), and the CLI
 * reaches each of them at least once against a real listening app (embedded SQLite store, no actors:
 * tasks stay PENDING, so reports on attempts are answered with a 409, which still proves the route).
 */
describe('the CLI covers every route of the OpenAPI document', function () {
  this.timeout(60_000);
  let f: ApiFixture;
  let url: string;
  let routes: string[] = [];
  const hits: Array<{ method: string; path: string; status: number }> = [];
  const dir = tempDir();

  before(async () => {
    f = await apiFixture();
    const doc = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, object> };
    routes = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    url = await f.app.listen({ port: 0, host: '127.0.0.1' });
    f.app.server.on('request', (req, res) =>
      res.on('finish', () => hits.push({ method: req.method ?? '', path: (req.url ?? '').split('?')[0], status: res.statusCode })),
    );
  });
  after(async () => {
    await f.close();
    dir.remove();
  });

  /** Runs the CLI in this process; @returns its exit code and output. */
  async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    const out = sink();
    const err = sink();
    const code = await runCli([...args, '--url', url], { env: {}, out, err });
    return { code, out: out.text(), err: err.text() };
  }
  async function ok(...args: string[]) {
    const r = await cli(...args);
    expect(r.code, `${args.join(' ')}: ${r.err}`).to.equal(0);
    return r.out;
  }
  async function apiError(code: RegExp, ...args: string[]) {
    const r = await cli(...args);
    expect(r.code, `${args.join(' ')}: ${r.err}`).to.equal(1);
    expect(r.err).to.match(code);
  }

  it('has a command for every route of the document', () => {
    const program = buildProgram({ env: {}, out: sink(), err: sink() });
    expect(routes.length).to.be.greaterThan(35);
    expect(
      routes.filter((r) => !ROUTE_COMMANDS[r]),
      'routes without a CLI command',
    ).to.deep.equal([]);
    const unknown = Object.entries(ROUTE_COMMANDS).filter(([, words]) => !commandOf(program, words));
    expect(unknown, 'rows naming no command').to.deep.equal([]);
  });

  it('reaches every route of the document from the CLI', async () => {
    const task = JSON.parse(await ok('submit', 'echo', '--payload', '{"n":1}', '--json'));
    expect(JSON.parse(await ok('submit', 'echo', '--count', '2', '--json')).submitted).to.equal(2);
    expect(JSON.parse(await ok('list', '--json')).tasks).to.have.length(3);
    expect(JSON.parse(await ok('get', task.task_id, '--attempts', '--json'))).to.include({ task_id: task.task_id, status: 'PENDING' });
    expect(JSON.parse(await ok('patch', task.task_id, '--priority', 'low', '--json')).priority).to.equal('low');
    expect(await ok('reschedule', task.task_id, '2030-01-01T00:00:00Z')).to.contain('2030-01-01T00:00:00.000Z');
    await apiError(/VALIDATION_FAILED|TASK_NOT_FOUND/, 'logs', task.task_id, '--attempt', '1');
    for (const [report, ...flags] of [
      ['complete', '--result', '1'],
      ['heartbeat'],
      ['checkpoint', '--value', '{}'],
      ['progress', '--progress', '0.5'],
    ])
      await apiError(/NOT_EXTERNAL_TASK|ATTEMPT_CONFLICT/, 'report', report, task.task_id, '--attempt', '1', ...flags);
    const logFile = path.join(dir.path, 'lines.json');
    fs.writeFileSync(logFile, JSON.stringify([{ level: 'info', msg: 'hello' }]));
    if (routes.includes('POST /api/v1/tasks/{id}/logs')) await cli('report', 'log', task.task_id, '--attempt', '1', logFile);
    if (routes.includes('POST /api/v1/queues/{queue}/lease')) await cli('queue', 'lease', 'default', '--worker-id', 'w1', '--max', '1');
    // The server's long polls time out on its manual clock: move it on while the client waits.
    const pending = await moveClockWhileWaiting(f, cli('wait', task.task_id, '--timeout', '0.3', '--json'));
    expect(pending.code, pending.err).to.equal(4);
    expect(JSON.parse(pending.out).status).to.equal('SCHEDULED');
    expect(JSON.parse(await ok('cancel', task.task_id, '--json')).status).to.equal('CANCELLED');
    expect(JSON.parse(await ok('wait', task.task_id, '--timeout', '5', '--json')).status).to.equal('CANCELLED');
    await apiError(/TASK_STATE_CONFLICT|TASK_NOT_FOUND/, 'dlq', 'replay', task.task_id);
    await apiError(/TASK_STATE_CONFLICT|TASK_NOT_FOUND/, 'dlq', 'delete', task.task_id);
    expect(JSON.parse(await ok('dlq', 'list', '--json')).tasks).to.deep.equal([]);

    const cron = JSON.parse(await ok('cron', 'add', 'nightly', '30 2 * * *', 'echo', '--json'));
    expect(JSON.parse(await ok('cron', 'get', cron.cron_id, '--json')).name).to.equal('nightly');
    expect(JSON.parse(await ok('cron', 'list', '--json')).cron_tasks).to.have.length(1);
    expect(JSON.parse(await ok('cron', 'update', cron.cron_id, '{"cron_expression":"0 3 * * *"}', '--json')).cron_expression).to.equal(
      '0 3 * * *',
    );
    expect(await ok('cron', 'pause', cron.cron_id)).to.contain('paused');
    expect(JSON.parse(await ok('cron', 'runs', cron.cron_id, '--json')).runs).to.deep.equal([]);
    expect(await ok('cron', 'preview', '0 0 1 1 *', '--from', '2026-01-02T00:00:00Z', '--count', '1')).to.equal(
      '2027-01-01T00:00:00.000Z\n',
    );
    expect(JSON.parse(await ok('cron', 'delete', cron.cron_id, '--json'))).to.deep.equal({ cron_id: cron.cron_id, deleted: true });

    const wfFile = path.join(dir.path, 'wf.json');
    fs.writeFileSync(wfFile, JSON.stringify({ workflow_name: 'w', tasks: [{ task_id: 'a', task_type: 'echo' }] }));
    const wf = JSON.parse(await ok('workflow', 'submit', wfFile, '--json'));
    expect(JSON.parse(await ok('workflow', 'get', wf.workflow_id, '--json')).workflow_name).to.equal('w');
    expect(JSON.parse(await ok('workflow', 'list', '--json')).workflows).to.have.length(1);
    expect(JSON.parse(await ok('workflow', 'cancel', wf.workflow_id, '--json')).status).to.equal('CANCELLED');

    expect(JSON.parse(await ok('tenant', 'set', 'acme', '--weight', '2', '--rate', '5', '--json'))).to.deep.include({
      tenant_id: 'acme',
      weight: 2,
    });
    expect(JSON.parse(await ok('tenant', 'list', '--json')).tenants.map((t: { tenant_id: string }) => t.tenant_id)).to.include('acme');
    expect(JSON.parse(await ok('tenant', 'delete', 'acme', '--json')).deleted).to.equal(true);
    expect(JSON.parse(await ok('rate-limit', 'set', 'echo', '5', '--burst', '2', '--json'))).to.include({ task_type: 'echo', burst: 2 });
    expect(JSON.parse(await ok('rate-limit', 'list', '--json')).rate_limits).to.have.length(1);
    expect(JSON.parse(await ok('rate-limit', 'delete', 'echo', '--json')).deleted).to.equal(true);
    expect(JSON.parse(await ok('concurrency-limit', 'set', 'k1', '3', '--json')).max_running).to.equal(3);
    expect(JSON.parse(await ok('concurrency-limit', 'get', 'k1', '--json')).max_running).to.equal(3);
    expect(JSON.parse(await ok('concurrency-limit', 'list', '--json')).concurrency_limits).to.have.length(1);
    expect(JSON.parse(await ok('concurrency-limit', 'delete', 'k1', '--json')).deleted).to.equal(true);
    expect(JSON.parse(await ok('audit', '--json'))).to.have.property('checked_at');
    expect(await ok('health')).to.equal('ok\n');
    expect(JSON.parse(await ok('ready', '--json')).status).to.equal('ready');
    expect(await ok('metrics')).to.match(/^# HELP/m);

    // Every route of the document exists, so a request on its method and path reached it (a 404 for an unknown id included).
    const missed = routes.filter((r) => {
      const [method, template] = r.split(' ');
      return !hits.some((h) => h.method === method && pathPattern(template).test(h.path));
    });
    expect(missed, 'routes the CLI never reached').to.deep.equal([]);
  });

  it('submit --count with one idempotency key says how many tasks are new', async () => {
    const out = await ok('submit', 'echo', '--count', '3', '--idempotency-key', 'cli-count-key');
    expect(out).to.match(/^submitted 3 tasks \(1 new, 2 answered by an existing task with the same idempotency key\) in /);
  });
});
