import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { http, waitForWorkflow } from '../helpers/http';
import { serviceConfigEnv } from '../helpers/service-config';
import { startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';

/**
 * Issue 6 ("Must show 4"): SIGKILL of the whole service in the middle of a 1,000-task DAG (20
 * layers of 50, each task depending on 2 of the previous layer), restart on the same data: the
 * workflow completes SUCCEEDED, every task has exactly one SUCCEEDED attempt, none started before
 * its upstreams completed, and every run saw all of its upstream results (the handler fails
 * permanently otherwise, which would fail the workflow).
 */
const TASK_TYPE = 'dag_step';
const LAYERS = 20;
const WIDTH = 50;

function handlerSource(logPath: string): string {
  return `'use strict';
const fs = require('node:fs');
module.exports = async (payload, ctx) => {
  for (const dep of payload.deps) {
    if (!(dep in ctx.upstreamResults)) {
      const err = new Error('missing upstream result of ' + dep);
      err.name = 'PermanentError';
      throw err;
    }
  }
  await new Promise((resolve) => setTimeout(resolve, 5 + Math.floor(Math.random() * 15)));
  fs.appendFileSync(${JSON.stringify(logPath)}, JSON.stringify({ id: ctx.taskId, attempt: ctx.attempt }) + '\\n');
  return { step: payload.step };
};
`;
}

function dag(): Array<{ task_id: string; task_type: string; payload: unknown; dependencies?: string[] }> {
  const tasks = [];
  for (let l = 0; l < LAYERS; l++) {
    for (let i = 0; i < WIDTH; i++) {
      const deps = l === 0 ? [] : [`L${l - 1}-${i}`, `L${l - 1}-${(i + 1) % WIDTH}`];
      tasks.push({
        task_id: `L${l}-${i}`,
        task_type: TASK_TYPE,
        payload: { step: `L${l}-${i}`, deps },
        ...(deps.length ? { dependencies: deps } : {}),
      });
    }
  }
  return tasks;
}

describe('chaos: SIGKILL in the middle of a 1,000-task workflow', function () {
  this.timeout(180_000);
  const dir = tempDir();
  after(() => dir.remove());

  it('after restart the workflow completes and every task SUCCEEDED exactly once, in dependency order', async () => {
    const logPath = path.join(dir.path, 'side-effects.log');
    const handlerPath = path.join(dir.path, 'dag-step.js');
    fs.writeFileSync(handlerPath, handlerSource(logPath));
    const env = serviceConfigEnv(dir.path, { handlers: { [TASK_TYPE]: handlerPath } });

    const first = await startServiceProcess(dir.path, env);
    let workflowId: string;
    try {
      const res = await http('POST', `${first.url}/api/v1/workflows`, { workflow_name: 'chaos-dag', tasks: dag() });
      expect(res.status).to.equal(202);
      workflowId = res.body.workflow_id;
      // Kill once a good part has run and attempts are in flight.
      const mid = await waitForWorkflow(first.url, workflowId, (w) => w.task_counts.SUCCEEDED >= 250 && w.task_counts.RUNNING > 0, 60_000);
      expect(mid.status).to.equal('RUNNING');
    } finally {
      await first.kill9();
    }

    const second = await startServiceProcess(dir.path, env);
    try {
      const wf = await waitForWorkflow(second.url, workflowId, undefined, 120_000);
      expect(wf.status).to.equal('SUCCEEDED');
      expect(wf.task_counts.SUCCEEDED).to.equal(LAYERS * WIDTH);
      const byLocal = new Map<string, any>(wf.task_details.map((t: any) => [t.workflow_task_id, t]));
      let rerun = 0;
      for (const t of wf.task_details) {
        const full = (await http('GET', `${second.url}/api/v1/tasks/${t.task_id}?include=attempts`)).body;
        expect(
          full.attempt_history.filter((a: any) => a.outcome === 'SUCCEEDED'),
          t.workflow_task_id,
        ).to.have.length(1);
        for (const a of full.attempt_history.filter((x: any) => x.outcome !== 'SUCCEEDED'))
          expect(a.error.type, t.workflow_task_id).to.equal('worker_lost');
        if (full.attempts > 1) rerun++;
        for (const d of t.dependencies) {
          expect(Date.parse(t.started_at), `${t.workflow_task_id} started before ${d} completed`).to.be.at.least(
            Date.parse(byLocal.get(d).completed_at),
          );
        }
      }
      // Each attempt's side effect happened at most once; the re-runs are the attempts the kill interrupted.
      const lines = fs
        .readFileSync(logPath, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { id: string; attempt: number });
      const keys = lines.map((l) => `${l.id}#${l.attempt}`);
      expect(new Set(keys).size).to.equal(keys.length);
      expect(new Set(lines.map((l) => l.id)).size).to.equal(LAYERS * WIDTH);
      expect(lines.length).to.be.within(LAYERS * WIDTH, LAYERS * WIDTH + rerun);
      expect((await http('GET', `${second.url}/api/v1/audit`)).body.blocked_limbo.count).to.equal(0);
    } finally {
      await second.stop();
    }
  });
});
