import { expect } from 'chai';
import fs from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { terminal, useInProcessScheduler } from '../helpers/in-process-scheduler';

/** A port nothing listens on: one the system gave a server that is closed again. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * "Why did my task fail?" on the real scheduler (forked workers, SQLite): the network cause of an
 * `http` task, the exit code of a worker process a handler ended, a handler error's cause chain,
 * and the `ctx.log` lines of each attempt through the REST API.
 */
describe('failure detail (in-process scheduler, forked workers)', function () {
  this.timeout(60_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 4, workerPingMs: 200 }, (dir) => {
    const exit3 = path.join(dir, 'exit3.js');
    fs.writeFileSync(exit3, "module.exports = async (payload, ctx) => { ctx.log('about to exit'); process.exit(3); };\n");
    const chatty = path.join(dir, 'chatty.js');
    fs.writeFileSync(
      chatty,
      [
        'module.exports = async (payload, ctx) => {',
        '  for (let i = 1; i <= payload.lines; i++) ctx.log(`row ${i} of attempt ${ctx.attempt}`, { row: i });',
        '  if (ctx.attempt === 1) {',
        "    const low = Object.assign(new Error('disk quota exceeded'), { code: 'EDQUOT' });",
        "    throw Object.assign(new Error('could not write the report', { cause: low }), { code: 'REPORT_WRITE' });",
        '  }',
        "  return 'written';",
        '};',
        '',
      ].join('\n'),
    );
    return { handlers: { exit3, chatty } };
  });
  const api = (url: string) => s.scheduler.app.inject({ method: 'GET', url });

  it('an http task to a closed port shows ECONNREFUSED in its attempt error', async () => {
    const port = await closedPort();
    const { task_id } = await s.scheduler.service.submit({
      task_type: 'http',
      payload: { url: `http://127.0.0.1:${port}/hook` },
      max_retries: 0,
    });
    const t = await s.waitFor(task_id, terminal);
    expect(t.status).to.equal('DEAD');
    const body = (await api(`/api/v1/tasks/${task_id}`)).json();
    expect(body.error).to.include({ type: 'HttpRequestError', code: 'ECONNREFUSED', retryable: true });
    expect(body.error.message).to.equal(`POST http://127.0.0.1:${port}/hook: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(body.error.cause).to.include({ message: 'fetch failed', type: 'TypeError' });
    expect(body.error.cause.cause).to.include({ code: 'ECONNREFUSED' });
  });

  it("a handler's process.exit(3) shows exit code 3 in its attempt error", async () => {
    const { task_id } = await s.scheduler.service.submit({ task_type: 'exit3', max_retries: 0 });
    const t = await s.waitFor(task_id, terminal, 30_000);
    expect(t.status).to.equal('DEAD');
    expect(t.error).to.deep.equal({
      message: 'worker process exited with code 3',
      type: 'worker_lost',
      retryable: true,
      exit_code: 3,
      signal: null,
    });
  });

  it("a handler error keeps its code and cause; each attempt's ctx.log lines are readable through the API", async () => {
    const { task_id } = await s.scheduler.service.submit({
      task_type: 'chatty',
      payload: { lines: 250 },
      max_retries: 1,
      retry_delay_seconds: 0,
    });
    const t = await s.waitFor(task_id, terminal);
    expect(t).to.include({ status: 'SUCCEEDED', attempts: 2 });
    const first = t.attempt_history[0].error;
    expect(first).to.include({ message: 'could not write the report', type: 'Error', code: 'REPORT_WRITE', retryable: true });
    expect(first.cause).to.deep.equal({ message: 'disk quota exceeded', type: 'Error', code: 'EDQUOT' });
    expect(first.stack).to.match(/^Error: could not write the report\n\s+at /);

    const log1 = (await api(`/api/v1/tasks/${task_id}/attempts/1/logs`)).json();
    expect(log1).to.include({ attempt: 1, dropped_lines: 50 });
    expect(log1.lines).to.have.length(200);
    expect(log1.lines[0]).to.include({ n: 51, message: 'row 51 of attempt 1' });
    expect(log1.lines[199]).to.deep.include({ n: 250, message: 'row 250 of attempt 1', fields: { row: 250 } });
    const log2 = (await api(`/api/v1/tasks/${task_id}/attempts/2/logs`)).json();
    expect(log2.lines[199]).to.include({ message: 'row 250 of attempt 2' });
  });
});
