import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { Scheduler, startScheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { terminal } from '../helpers/in-process-scheduler';
import { serviceEnv } from '../helpers/service-process';
import { serviceStoreOverrides } from '../helpers/service-store';
import { serviceSchemaExists } from '../helpers/service-store';
import { tempDir } from '../helpers/temp-dir';

const FIXTURES = path.resolve(__dirname, '..', '..', '..', 'test', 'fixtures', 'handlers');
const COMPILED_TS = path.resolve(__dirname, '..', 'fixtures', 'handlers', 'compiled-ts.js');
const CONFIG_DIR = path.resolve(__dirname, '..', '..', '..', 'config');
const MAIN = path.resolve(__dirname, '..', '..', 'src', 'main.js');

/**
 * The operator's layout: a config file in a folder of its own naming handler modules beside it by
 * relative paths (which resolve against that folder, not the working directory), in every format
 * the service loads, each exporting a payload schema.
 */
function writeDeployment(root: string): string {
  const conf = path.join(root, 'etc', 'scheduler');
  const handlers = path.join(root, 'srv', 'handlers');
  fs.mkdirSync(conf, { recursive: true });
  fs.cpSync(FIXTURES, handlers, { recursive: true });
  const file = path.join(conf, 'scheduler.json');
  const config = {
    handlers: {
      greet: '../../srv/handlers/greet.mjs',
      shout: '../../srv/handlers/esm-package/shout.js',
      count: '../../srv/handlers/count.cjs',
      sum: '../../srv/handlers/commonjs/sum',
      charge: COMPILED_TS,
    },
  };
  fs.writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

describe('handlers on the scheduler host: ESM, CommonJS and compiled TypeScript modules with payload schemas', function () {
  this.timeout(60_000);
  const dir = tempDir();
  let scheduler: Scheduler | null = null;
  const s = () => scheduler as Scheduler;

  before(async () => {
    const config = loadConfig({
      configDir: CONFIG_DIR,
      env: { SCHEDULER_CONFIG: writeDeployment(dir.path) },
      overrides: {
        sqlitePath: path.join(dir.path, 's.db'),
        ...serviceStoreOverrides(dir.path),
        logLevel: 'silent',
        workers: 1,
        defaults: { retryDelaySeconds: 0 },
      },
    });
    scheduler = await startScheduler(config, { logger: pino({ level: 'silent' }) });
  });
  after(async () => {
    await scheduler?.close();
    dir.remove();
  });

  const post = async (url: string, body: unknown) => {
    const res = await s().app.inject({ method: 'POST', url, payload: body as object });
    return { status: res.statusCode, body: res.json() };
  };
  const waitFor = async (id: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const res = await s().app.inject({ method: 'GET', url: `/api/v1/tasks/${id}?include=attempts` });
      const t = res.json();
      if (terminal(t)) return t;
      if (Date.now() > deadline) throw new Error(`task ${id} did not end: ${res.body}`);
      await new Promise((r) => setTimeout(r, 25)); // polling the task's state, not timing logic
    }
  };
  const storedCount = async () => Object.values(await s().store.countByState()).reduce((a, b) => a + b, 0);

  it('a bad payload is refused with 400 naming the field, alone, in a batch and in a workflow; nothing is stored', async () => {
    const cases: Array<[string, unknown, string]> = [
      ['greet', {}, 'payload.name'],
      ['greet', { name: '' }, 'payload.name'],
      ['shout', { text: 5 }, 'payload.text'],
      ['count', { items: [1, 2, 3, 4] }, 'payload.items'],
      ['sum', { numbers: [1, 'two'] }, 'payload.numbers[1]'],
      ['charge', { order_id: 'x-1' }, 'payload.order_id'],
      ['charge', null, 'payload'],
    ];
    for (const [task_type, payload, field] of cases) {
      const res = await post('/api/v1/tasks', { task_type, payload });
      expect(res.status, `${task_type} ${JSON.stringify(payload)}`).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_FAILED');
      expect(res.body.error.details.field, task_type).to.equal(field);
    }
    const batch = await post('/api/v1/tasks/batch', {
      tasks: [
        { task_type: 'greet', payload: { name: 'Ada' } },
        { task_type: 'count', payload: { items: 'many' } },
      ],
    });
    expect(batch.status).to.equal(400);
    expect(batch.body.error.details.field).to.equal('tasks[1].payload.items');
    const workflow = await post('/api/v1/workflows', {
      workflow_name: 'bad',
      tasks: [
        { task_id: 'a', task_type: 'sum', payload: { numbers: [1] } },
        { task_id: 'b', task_type: 'shout', payload: {}, dependencies: ['a'] },
      ],
    });
    expect(workflow.status).to.equal(400);
    expect(workflow.body.error.details.field).to.equal('tasks[1].payload.text');
    expect(await storedCount()).to.equal(0);
  });

  it('good payloads run to SUCCEEDED in each format: ESM (.mjs, .js), CommonJS (.cjs, .js), compiled TypeScript', async () => {
    const batch = await post('/api/v1/tasks/batch', {
      tasks: [
        { task_type: 'greet', payload: { name: 'Ada', excited: true } },
        { task_type: 'shout', payload: { text: 'quiet' } },
        { task_type: 'count', payload: { items: ['a', 'b', 'c'] } },
        { task_type: 'sum', payload: { numbers: [1, 2, 3.5] } },
        { task_type: 'charge', payload: { order_id: 'ord-7' } },
      ],
    });
    expect(batch.status, JSON.stringify(batch.body)).to.equal(202);
    const results = [];
    for (const ack of batch.body.tasks) {
      const t = await waitFor(ack.task_id);
      expect(t.status, JSON.stringify(t)).to.equal('SUCCEEDED');
      results.push(t.result);
    }
    expect(results).to.deep.equal([
      { greeting: 'hello, Ada!', attempt: 1, format: 'esm' },
      { text: 'QUIET', format: 'esm-js' },
      { length: 3, format: 'cjs' },
      { sum: 6.5, format: 'cjs-js' },
      { charged: 'ord-7', attempt: 1, format: 'tsc' },
    ]);
  });

  it('a workflow of user types runs; a PermanentError from a host handler fails the task with no retry', async () => {
    const wf = await post('/api/v1/workflows', {
      workflow_name: 'formats',
      tasks: [
        { task_id: 'a', task_type: 'sum', payload: { numbers: [2, 2] } },
        { task_id: 'b', task_type: 'greet', payload: { name: 'Grace' }, dependencies: ['a'] },
      ],
    });
    expect(wf.status, JSON.stringify(wf.body)).to.equal(202);
    expect((await waitFor(wf.body.task_ids.b)).result).to.include({ greeting: 'hello, Grace' });

    const refused = await post('/api/v1/tasks', { task_type: 'charge', payload: { order_id: 'ord-8', refuse: true }, max_retries: 3 });
    expect(refused.status).to.equal(202);
    const t = await waitFor(refused.body.task_id);
    expect(t.status).to.equal('FAILED');
    expect(t.attempts).to.equal(1);
    expect(t.attempt_history).to.have.length(1);
    expect(JSON.stringify(t.attempt_history[0])).to.include('PermanentError').and.include('order ord-8 cannot be charged');
  });
});

describe('handlers on the scheduler host: a module that is missing stops start-up', function () {
  this.timeout(60_000);
  const dir = tempDir();
  after(() => dir.remove());

  it('exit 78 with one line naming the task type, the path as written and the resolved path', async () => {
    const conf = path.join(dir.path, 'conf');
    fs.mkdirSync(conf);
    const file = path.join(conf, 'scheduler.json');
    fs.writeFileSync(file, JSON.stringify({ handlers: { send_email: './handlers/send-email.js' } }));
    const data = path.join(dir.path, 'data');
    fs.mkdirSync(data);
    // The working directory holds a module of that relative path: it is not the one looked for.
    fs.mkdirSync(path.join(dir.path, 'handlers'));
    fs.writeFileSync(path.join(dir.path, 'handlers', 'send-email.js'), 'module.exports = async () => 1;\n');
    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const env = serviceEnv(data, 0, { SCHEDULER_CONFIG: file });
      const child = execFile(process.execPath, [MAIN], { env, cwd: dir.path, timeout: 30_000 }, (_err, _stdout, stderr) =>
        resolve({ code: child.exitCode, stderr }),
      );
    });
    const line = r.stderr.trim();
    expect(r.code, line).to.equal(78);
    expect(line.split('\n'), line).to.have.length(1);
    expect(line).to.equal(
      `handlers.send_email: cannot load "./handlers/send-email.js" (resolved to ${path.join(conf, 'handlers', 'send-email.js')}): no such module`,
    );
    expect(fs.readdirSync(data), 'no store file').to.deep.equal([]);
    expect(await serviceSchemaExists(data), 'no store schema').to.equal(false);
  });
});
