import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { isTerminal, waitForTask, waitForWorkflow } from '../helpers/http';
import { serviceConfigEnv } from '../helpers/service-config';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const TRACEPARENT = `00-${TRACE_ID}-${PARENT}-01`;

async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

/** The JSON log lines the service (and its workers) wrote so far. */
function logLines(svc: ServiceProcess): Array<Record<string, unknown>> {
  return svc
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{') && l.endsWith('}')) // a line still being written is not one yet
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('W3C traceparent from submission to handler (issue 9, real process)', function () {
  this.timeout(60_000);
  const dir = tempDir();
  let svc: ServiceProcess;
  before(async () => {
    const handler = path.join(dir.path, 'trace-probe.js');
    fs.writeFileSync(
      handler,
      `module.exports = async (payload, ctx) => { ctx.log('probe ran', { probe: true }); return ctx.traceContext; };\n`,
    );
    svc = await startServiceProcess(dir.path, {
      ...serviceConfigEnv(dir.path, { handlers: { trace_probe: handler } }),
      LOG_LEVEL: 'info',
      WORKERS: '1',
    });
  });
  after(async () => {
    await svc?.stop();
    dir.remove();
  });

  it('the traceparent header of POST /api/v1/tasks reaches ctx.traceContext and the attempt log lines', async () => {
    const sub = await post(`${svc.url}/api/v1/tasks`, { task_type: 'trace_probe' }, { traceparent: TRACEPARENT });
    expect(sub.status).to.equal(202);
    const id = sub.body.task_id as string;
    const t = await waitForTask(svc.url, id, isTerminal);
    expect(t.status).to.equal('SUCCEEDED');
    expect(t.traceparent).to.equal(TRACEPARENT);
    expect(t.result.traceId).to.equal(TRACE_ID);
    expect(t.result.spanId)
      .to.match(/^[0-9a-f]{16}$/)
      .and.not.equal(PARENT);
    expect(t.result.traceparent).to.equal(`00-${TRACE_ID}-${t.result.spanId}-01`);
    const line = logLines(svc).find((l) => l.task_id === id && l.msg === 'probe ran');
    expect(line, svc.output().slice(-2000)).to.include({ trace_id: TRACE_ID, span_id: t.result.spanId, attempt: 1, probe: true });
  });

  it('a task submitted without the header runs with traceContext null', async () => {
    const sub = await post(`${svc.url}/api/v1/tasks`, { task_type: 'trace_probe' });
    const t = await waitForTask(svc.url, sub.body.task_id, isTerminal);
    expect(t.result).to.equal(null);
    expect(t).to.not.have.property('traceparent');
  });

  it('the header applies to every task of a batch and of a workflow', async () => {
    const batch = await post(
      `${svc.url}/api/v1/tasks/batch`,
      { tasks: [{ task_type: 'trace_probe' }, { task_type: 'trace_probe' }] },
      { traceparent: TRACEPARENT },
    );
    expect(batch.status).to.equal(202);
    for (const ack of batch.body.tasks) expect((await waitForTask(svc.url, ack.task_id, isTerminal)).result.traceId).to.equal(TRACE_ID);
    const wf = await post(
      `${svc.url}/api/v1/workflows`,
      {
        tasks: [
          { task_id: 'a', task_type: 'trace_probe' },
          { task_id: 'b', task_type: 'trace_probe', dependencies: ['a'] },
        ],
      },
      { traceparent: TRACEPARENT },
    );
    expect(wf.status).to.equal(202);
    await waitForWorkflow(svc.url, wf.body.workflow_id);
    for (const id of Object.values(wf.body.task_ids as Record<string, string>))
      expect((await waitForTask(svc.url, id, isTerminal)).result.traceId).to.equal(TRACE_ID);
  });

  it('a malformed traceparent is refused with 400 naming the header', async () => {
    for (const url of ['/api/v1/tasks', '/api/v1/tasks/batch', '/api/v1/workflows']) {
      const body = url.endsWith('tasks')
        ? { task_type: 'noop' }
        : url.endsWith('batch')
          ? { tasks: [{ task_type: 'noop' }] }
          : { tasks: [{ task_id: 'a', task_type: 'noop' }] };
      const res = await post(`${svc.url}${url}`, body, { traceparent: `00-${TRACE_ID}-${PARENT}` });
      expect(res.status, url).to.equal(400);
      expect(res.body.error).to.include({ code: 'VALIDATION_FAILED' });
      expect(res.body.error.details.field).to.equal('traceparent');
    }
  });

  it('a traceparent header given twice (sent as one comma-joined line, as HTTP allows) is refused as such, not as a bad format', async () => {
    const headers = new Headers({ 'content-type': 'application/json' });
    headers.append('traceparent', TRACEPARENT);
    headers.append('traceparent', TRACEPARENT);
    const res = await fetch(`${svc.url}/api/v1/tasks`, { method: 'POST', headers, body: JSON.stringify({ task_type: 'noop' }) });
    const body = (await res.json()) as { error: { code: string; message: string; details: { field: string } } };
    expect(res.status).to.equal(400);
    expect(body.error.details.field).to.equal('traceparent');
    expect(body.error.message).to.include('must be given once');
  });
});
