/**
 * Smoke test of the k6 scripts in load-tests/k6/: k6 is not installed here, so each compiled
 * script runs once, for real, against the real service (one process for the suite) through the
 * stand-ins of test/load-tests/k6-shim/ (one child process per script). A script that throws,
 * whose options are invalid (scenario exec, threshold metric or expression), whose checks fail,
 * or whose requests fail fails the test. Speed is never asserted (thresholds are only printed on
 * failure). Sizes are the smallest each script accepts, through __ENV.
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { http } from '../helpers/http';
import { useServiceProcess } from '../helpers/service-process';
import type { RunSummary } from './k6-shim/run-script';

const K6_DIR = path.resolve(__dirname, '..', '..', 'load-tests', 'k6');
const RUNNER = path.join(__dirname, 'k6-shim', 'run-script.js');

/** Per script: the smoke sizes, and the requests that may fail (throttled flood batches). */
const SMOKE_ENV: Record<string, Record<string, string>> = {
  'steady-submit.js': { ITERATIONS: '3' },
  'batch-submit.js': { TASKS: '20', BATCH_SIZE: '10', CONCURRENCY: '2', COMPLETION_TIMEOUT_S: '20' },
  'midnight-herd.js': {
    HERD_TASKS: '20',
    BATCH_SIZE: '10',
    CONCURRENCY: '2',
    LEAD_S: '1.5',
    COMPLETION_TIMEOUT_S: '20',
    LATENESS_SAMPLE: '20',
  },
  'mixed-tenants.js': { ITERATIONS: '2', FLOOD_BATCH: '10', STEADY_TENANTS: '2', POLL_TIMEOUT_S: '15' },
  'cron-at-scale.js': { CRONS: '3', CONCURRENCY: '1' },
  'status-reads.js': { ITERATIONS: '3', SEED_TASKS: '5', LIST_LIMIT: '2' },
  // Only the submission contract is fixed so far; GET /api/v1/workflows/{id} is not polled.
  'workflow-submit.js': { ITERATIONS: '1', WF_WIDTH: '2', WAIT_FOR_COMPLETION: 'false' },
};

function runScript(script: string, env: Record<string, string>): Promise<{ code: number; summary: RunSummary | null; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [RUNNER, path.join(K6_DIR, script), JSON.stringify(env)],
      { timeout: 90_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? Number((err as { code?: unknown }).code ?? 1) : 0;
        const last = stdout.trim().split('\n').pop() ?? '';
        let summary: RunSummary | null = null;
        try {
          summary = last ? (JSON.parse(last) as RunSummary) : null;
        } catch {
          summary = null;
        }
        resolve({ code, summary, stderr });
      },
    );
  });
}

describe('k6 scripts (smoke run through k6 stand-ins)', function () {
  this.timeout(120_000);
  const fixture = useServiceProcess();

  it('every script in load-tests/k6 has smoke sizes', () => {
    const scripts = fs.readdirSync(K6_DIR).filter((f) => f.endsWith('.js'));
    expect(scripts.sort()).to.deep.equal(Object.keys(SMOKE_ENV).sort());
  });

  for (const [script, sizes] of Object.entries(SMOKE_ENV)) {
    it(`${script} runs one pass without a failed check or request`, async function () {
      if (script === 'workflow-submit.js') {
        const probe = await http('POST', `${fixture.svc.url}/api/v1/workflows`, {});
        if (probe.status === 404 && probe.body?.error?.code === 'ROUTE_NOT_FOUND') {
          console.log('      skipped: POST /api/v1/workflows answers 404 ROUTE_NOT_FOUND (workflows are not built yet)');
          this.skip();
        }
      }
      const { code, summary, stderr } = await runScript(script, { BASE_URL: fixture.svc.url, ...sizes });
      const why = `${script}: exit ${code}\n${stderr.slice(-3000)}\n${JSON.stringify(summary, null, 2)}`;
      expect(code, why).to.equal(0);
      expect(summary, why).to.not.equal(null);
      const s = summary as RunSummary;
      expect(s.requests, why).to.be.greaterThan(0);
      expect(s.checks.length, why).to.be.greaterThan(0);
      expect(
        s.checks.filter((c) => c.fails > 0),
        why,
      ).to.deep.equal([]);
      // A flooding tenant may be throttled (429/503) by design; nothing else may fail.
      const failed = s.failed_requests.filter((r) => !(r.name === 'submit_flood' && (r.status === '429' || r.status === '503')));
      expect(failed, why).to.deep.equal([]);
    });
  }

  // Until the service has workflows, the script is checked against a stand-in of the contract:
  // every task has id, task_type, payload and dependencies naming other tasks of the workflow.
  it('workflow-submit.js sends workflows that follow the submission contract (stand-in server)', async () => {
    const bodies: any[] = [];
    const server: Server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw);
        bodies.push(body);
        const ids = new Set((body.tasks ?? []).map((t: any) => t.task_id));
        const ok =
          req.method === 'POST' &&
          req.url === '/api/v1/workflows' &&
          Array.isArray(body.tasks) &&
          typeof body.workflow_name === 'string' &&
          body.tasks.every(
            (t: any) =>
              typeof t.task_id === 'string' &&
              !('id' in t) &&
              typeof t.task_type === 'string' &&
              'payload' in t &&
              Array.isArray(t.dependencies) &&
              t.dependencies.every((d: string) => ids.has(d) && d !== t.task_id),
          );
        res.writeHead(ok ? 202 : 400, { 'content-type': 'application/json' });
        res.end(JSON.stringify(ok ? { workflow_id: `wf-${bodies.length}`, status: 'RUNNING' } : { error: { code: 'VALIDATION_FAILED' } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { code, summary, stderr } = await runScript('workflow-submit.js', {
        BASE_URL: url,
        ...SMOKE_ENV['workflow-submit.js'],
        ITERATIONS: '2',
      });
      const why = `exit ${code}\n${stderr.slice(-3000)}\n${JSON.stringify(summary, null, 2)}`;
      expect(code, why).to.equal(0);
      expect(bodies).to.have.length(2);
      expect(bodies[0].tasks).to.have.length(4); // extract, WF_WIDTH = 2 transforms, load
      expect(
        (summary as RunSummary).checks.filter((c) => c.fails > 0),
        why,
      ).to.deep.equal([]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
