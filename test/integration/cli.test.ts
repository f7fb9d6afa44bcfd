import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { isTerminal, waitForTask } from '../helpers/http';
import { useServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'scheduler');

/** Runs `bin/scheduler args…` against `url`; resolves with its exit code and output (never rejects). */
function cli(url: string, args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, SCHEDULER_URL: url, ...env } }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('bin/scheduler CLI against a live service (issue 9)', function () {
  this.timeout(60_000);
  const fixture = useServiceProcess({ WORKERS: '1', WORKER_CONCURRENCY: '8' });
  const dir = tempDir();
  after(() => dir.remove());
  const run = (...args: string[]) => cli(fixture.svc.url, args);

  it('submit --json, then get --json shows the task and its result', async () => {
    const sub = await run('submit', 'echo', '--payload', '{"order": 42}', '--priority', 'high', '--json');
    expect(sub.code, sub.stderr).to.equal(0);
    const ack = JSON.parse(sub.stdout);
    expect(ack.status).to.equal('PENDING');
    await waitForTask(fixture.svc.url, ack.task_id, isTerminal);
    const got = await run('get', ack.task_id, '--json');
    expect(got.code, got.stderr).to.equal(0);
    const task = JSON.parse(got.stdout);
    expect(task).to.include({ task_id: ack.task_id, status: 'SUCCEEDED', priority: 'high' });
    expect(task.result).to.deep.equal({ order: 42 });
  });

  it("submit's retry flags set the task's retry policy; list --idempotency-key finds the task of a key", async () => {
    const key = `cli-retry-${process.pid}`;
    const flags = ['--max-retries', '4', '--retry-backoff', 'linear', '--retry-delay', '2.5', '--max-retry-delay', '60'];
    const sub = await run('submit', 'echo', ...flags, '--no-retry-jitter', '--idempotency-key', key, '--json');
    expect(sub.code, sub.stderr).to.equal(0);
    const id = JSON.parse(sub.stdout).task_id as string;
    const task = JSON.parse((await run('get', id, '--json')).stdout);
    expect(task).to.include({
      max_retries: 4,
      retry_backoff: 'linear',
      retry_delay_seconds: 2.5,
      max_retry_delay_seconds: 60,
      retry_jitter: false,
    });
    const jitterOf = async (...args: string[]) => {
      const ack = await run('submit', 'echo', '--retry-backoff', 'fixed', ...args, '--json');
      expect(ack.code, ack.stderr).to.equal(0);
      return JSON.parse((await run('get', JSON.parse(ack.stdout).task_id, '--json')).stdout).retry_jitter as boolean;
    };
    expect(await jitterOf('--retry-jitter')).to.equal(true);
    // Neither jitter flag: no field sent, the service's default (on only for exponential backoff).
    expect(await jitterOf()).to.equal(false);

    const found = await run('list', '--idempotency-key', key, '--json');
    expect(found.code, found.stderr).to.equal(0);
    expect(JSON.parse(found.stdout).tasks.map((t: { task_id: string }) => t.task_id)).to.deep.equal([id]);
    const bad = await run('submit', 'echo', '--retry-backoff', 'quadratic');
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.match(/exponential, fixed, linear/);
  });

  it("logs shows an attempt's kept ctx.log lines (the latest attempt by default)", async () => {
    const sub = JSON.parse((await run('submit', 'echo', '--payload', '"x"', '--json')).stdout);
    await waitForTask(fixture.svc.url, sub.task_id, isTerminal);
    const human = await run('logs', sub.task_id);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.equal('(attempt 1 kept no log lines)\n');
    const json = await run('logs', sub.task_id, '--attempt', '1', '--json');
    expect(JSON.parse(json.stdout)).to.include({ task_id: sub.task_id, attempt: 1, dropped_lines: 0 }).and.deep.include({ lines: [] });
    const none = await run('logs', sub.task_id, '--attempt', '2');
    expect(none.code).to.equal(1);
    expect(none.stderr).to.match(/VALIDATION_FAILED/);
  });

  it('an invalid request exits non-zero with the API error message on stderr', async () => {
    const res = await run('submit', 'no_such_type');
    expect(res.code).to.equal(1);
    expect(res.stderr).to.match(/UNKNOWN_TASK_TYPE \(HTTP 400\)/);
    expect(res.stderr).to.contain('no_such_type');
    const bad = await run('submit', 'echo', '--at', '2030-02-30T09:00:00Z', '--json');
    expect(bad.code).to.equal(1);
    const err = JSON.parse(bad.stderr).error;
    expect(err).to.include({ status: 400, code: 'VALIDATION_FAILED' });
    expect(err.details.field).to.equal('scheduled_at');
    const missing = await run('get', 'no-such-task');
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/TASK_NOT_FOUND/);
  });

  it('usage errors exit 2 and an unreachable service exits 3', async () => {
    expect((await run('submit', 'echo', '--payload', '{not json')).code).to.equal(2);
    expect((await run('frobnicate')).code).to.equal(2);
    // A bad option value: one line (CLIENT.md), not the command's whole usage after it.
    const bad = await run('submit', 'echo', '--priority', 'urgent');
    expect(bad.code).to.equal(2);
    expect(bad.stderr.trim().split('\n'), bad.stderr).to.have.length(1);
    expect(bad.stderr).to.include("argument 'urgent' is invalid");
    // Arguments that would be dropped are refused, not ignored.
    const file = path.join(dir.path, 'one.jsonl');
    fs.writeFileSync(file, '{"task_type":"echo"}\n');
    const beside = await run('submit', 'echo', '--file', file, '--count', '5', '--payload', '{"a":1}');
    expect(beside.code, beside.stderr).to.equal(2);
    expect(beside.stderr).to.include('not with a task_type, --count, --payload');
    expect((await run('wait', 'x', '--timeout', '-5')).code).to.equal(2);
    const down = await cli('http://127.0.0.1:9', ['list']);
    expect(down.code).to.equal(3);
    expect(down.stderr).to.match(/cannot reach the scheduler/);
    const downJson = await cli('http://127.0.0.1:9', ['list', '--json']);
    expect(downJson.code).to.equal(3);
    const parsed = JSON.parse(downJson.stderr) as { error: { code: string; message: string } };
    expect(parsed.error.code).to.equal('ECONNREFUSED');
    expect(parsed.error.message).to.match(/cannot reach the scheduler/);
  });

  it('a URL that is not http(s) exits 2 with one line naming it; an answer that is not JSON exits 1, nothing printed as a result', async () => {
    for (const [args, env, names] of [
      [['--url', 'notaurl', 'list'], {}, '--url'],
      [['health'], { SCHEDULER_URL: 'ftp://x' }, 'SCHEDULER_URL'],
    ] as const) {
      const r = await cli(fixture.svc.url, [...args], env);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr.trim().split('\n'), r.stderr).to.have.length(1);
      expect(r.stderr).to.include(names).and.include('must be an http:// or https:// URL');
    }
    for (const [args, env, names] of [
      [['--api-key', 'k\u0007', 'list'], {}, '--api-key: holds a character an HTTP header cannot carry (U+0007)'],
      [['list'], { SCHEDULER_API_KEY: 'secret\n' }, 'SCHEDULER_API_KEY: starts or ends with white space'],
    ] as const) {
      const r = await cli(fixture.svc.url, [...args], env);
      expect(r.code, r.stderr).to.equal(2);
      expect(r.stderr.trim().split('\n'), r.stderr).to.have.length(1);
      expect(r.stderr).to.include(names);
    }
    const other = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('hello world');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      for (const args of [['submit', 'noop'], ['get', 'abc'], ['list'], ['health']]) {
        const r = await cli(url, args);
        expect(r.code, `${args.join(' ')}: ${r.stdout}${r.stderr}`).to.equal(1);
        expect(r.stdout, args.join(' ')).to.equal('');
        expect(r.stderr).to.include('NOT_JSON');
      }
    } finally {
      other.close();
    }
    const page = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<html>sign in</html>');
    });
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    try {
      const r = await cli(`http://127.0.0.1:${(page.address() as AddressInfo).port}`, ['metrics']);
      expect(r.code, `metrics: ${r.stdout}${r.stderr}`).to.equal(1);
      expect(r.stdout).to.equal('');
      expect(r.stderr).to.include('NOT_METRICS').and.include('not Prometheus text');
    } finally {
      page.close();
    }
  });

  it('cron preview prints the fire times, one a line', async () => {
    const res = await run('cron', 'preview', '30 2 * * *', '--tz', 'America/New_York', '--from', '2026-03-07T00:00:00Z', '--count', '3');
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout.trim().split('\n')).to.deep.equal([
      '2026-03-07T07:30:00.000Z',
      '2026-03-08T07:30:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ]);
  });

  it('cron add, list, pause and resume', async () => {
    const add = await run('cron', 'add', 'nightly', '0 3 * * *', 'noop', '--tz', 'Europe/Paris', '--json');
    expect(add.code, add.stderr).to.equal(0);
    const id = JSON.parse(add.stdout).cron_id as string;
    const list = await run('cron', 'list');
    expect(list.stdout).to.match(/^CRON_ID\s+NAME\s+EXPRESSION\s+TIMEZONE\s+TYPE\s+STATUS\s+NEXT_FIRE/);
    const row = (text: string) => text.split('\n').find((l) => l.startsWith(id)) ?? '';
    expect(row(list.stdout)).to.match(/\sACTIVE\s/);
    const paused = JSON.parse((await run('cron', 'pause', id, '--json')).stdout);
    expect(paused).to.include({ enabled: false, status: 'PAUSED', next_fire_time: null });
    expect(row((await run('cron', 'list')).stdout)).to.match(/\sPAUSED(\s|$)/);
    const resumed = JSON.parse((await run('cron', 'resume', id, '--json')).stdout);
    expect(resumed.enabled).to.equal(true);
    expect(resumed.next_fire_time).to.be.a('string');
  });

  it('bulk submit (--count and --file), list as a table, and bench', async () => {
    const bulk = await run('submit', 'noop', '--count', '120', '--batch-size', '50', '--json');
    expect(bulk.code, bulk.stderr).to.equal(0);
    expect(JSON.parse(bulk.stdout).submitted).to.equal(120);
    const file = path.join(dir.path, 'tasks.jsonl');
    fs.writeFileSync(file, '{"task_type": "echo", "payload": 1}\n{"task_type": "noop", "priority": "low"}\n');
    const fromFile = await run('submit', '--file', file);
    expect(fromFile.code, fromFile.stderr).to.equal(0);
    expect(fromFile.stdout).to.match(/^submitted 2 tasks in/);
    // A failing batch: what was stored before it is reported, and its item is counted from the file's start.
    const partial = path.join(dir.path, 'partial.jsonl');
    fs.writeFileSync(
      partial,
      [
        '{"task_type":"noop"}',
        '{"task_type":"noop"}',
        '{"task_type":"noop"}',
        '{"task_type":"noop","priority":"bad"}',
        '{"task_type":"noop"}',
      ].join('\n'),
    );
    const stopped = await run('submit', '--file', partial, '--batch-size', '2');
    expect(stopped.code, stopped.stderr).to.equal(1);
    expect(stopped.stderr).to.include('submitted 2 of 5 tasks').and.include('tasks[3].priority');
    const stoppedJson = await run('submit', '--file', partial, '--batch-size', '2', '--json');
    expect(stoppedJson.code).to.equal(1);
    expect(JSON.parse(stoppedJson.stdout)).to.include({ submitted: 2, total: 5 }).and.have.property('tasks').with.length(2);
    expect(JSON.parse(stoppedJson.stderr).error.details.field).to.equal('tasks[3].priority');
    expect((await run('submit', '--file', partial, '--batch-size', '1001')).code).to.equal(2);
    // A number beyond a double's range would be sent, and stored, as null: refused first.
    const huge = await run('submit', 'echo', '--payload', '{"a":[1,1e400]}');
    expect(huge.code).to.equal(2);
    expect(huge.stderr).to.include('a[1]: Infinity (a literal beyond ±1.8e308, such as 1e400, reads as one) is a number JSON cannot hold');
    expect(huge.stderr.trim().split('\n')).to.have.length(1);
    // Nesting past what JSON.stringify can write: one line and exit 2, not a RangeError's stack.
    const deep = await run('submit', 'echo', '--payload', '['.repeat(8000) + ']'.repeat(8000));
    expect(deep.code, deep.stderr).to.equal(2);
    expect(deep.stderr.trim().split('\n'), deep.stderr).to.have.length(1);
    expect(deep.stderr).to.include('nests deeper than 100 levels');
    const list = await run('list', '--limit', '5');
    expect(list.stdout.split('\n')[0]).to.match(/^TASK_ID\s+TYPE\s+STATUS\s+PRIORITY\s+ATTEMPTS\s+CREATED$/);
    expect(list.stdout.trim().split('\n')).to.have.length.at.least(6);
    const bench = await run('bench', '--count', '200', '--batch-size', '100');
    expect(bench.code, bench.stderr).to.equal(0);
    expect(bench.stdout).to.match(/^submitted 200 noop tasks in batches of 100: [\d.]+ s, \d+ tasks\/s/);
  });

  it('dlq list and replay --all', async () => {
    const sub = await run('submit', 'fail', '--max-retries', '0', '--queue', 'dlq-test', '--count', '3', '--json');
    const ids = (JSON.parse(sub.stdout).tasks as Array<{ task_id: string }>).map((t) => t.task_id);
    for (const id of ids) await waitForTask(fixture.svc.url, id, (t) => t.status === 'DEAD');
    const list = await run('dlq', 'list', '--queue', 'dlq-test', '--json');
    expect(
      JSON.parse(list.stdout)
        .tasks.map((t: { task_id: string }) => t.task_id)
        .sort(),
    ).to.deep.equal([...ids].sort());
    const replay = await run('dlq', 'replay', '--all', '--queue', 'dlq-test', '--json');
    expect(replay.code, replay.stderr).to.equal(0);
    expect(JSON.parse(replay.stdout)).to.deep.equal({ replayed: 3, skipped: [] });
    for (const id of ids) await waitForTask(fixture.svc.url, id, (t) => t.status === 'DEAD' && t.attempts === 2);
  });

  it('workflow submit from a file, then workflow get', async () => {
    const file = path.join(dir.path, 'wf.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        workflow_name: 'cli',
        tasks: [
          { task_id: 'a', task_type: 'echo', payload: 1 },
          { task_id: 'b', task_type: 'noop', dependencies: ['a'] },
        ],
      }),
    );
    const sub = await run('workflow', 'submit', file, '--json');
    expect(sub.code, sub.stderr).to.equal(0);
    const ack = JSON.parse(sub.stdout);
    expect(ack.tasks).to.deep.equal({ a: 'PENDING', b: 'BLOCKED' });
    const human = await run('workflow', 'submit', file);
    expect(human.code, human.stderr).to.equal(0);
    expect(human.stdout).to.match(/\nWORKFLOW_TASK_ID\s+TASK_ID\s+STATUS\na\s+\S+\s+PENDING\nb\s+\S+\s+BLOCKED\n/);
    await waitForTask(fixture.svc.url, ack.task_ids.b, isTerminal);
    const got = await run('workflow', 'get', ack.workflow_id);
    expect(got.code, got.stderr).to.equal(0);
    expect(got.stdout).to.match(/status:\s+SUCCEEDED/);
    expect(got.stdout).to.match(/\nWORKFLOW_TASK_ID\s+TASK_ID\s+TYPE\s+STATUS\s+ATTEMPTS\na\s+/);
    expect(got.stdout).to.not.match(/^tasks:/m);
  });
});
