/**
 * PostgreSQL goes away under load (issue 32, must-show 4), on real processes: a service with
 * SCHEDULER_STORE=postgres on a private server of this test (test/helpers/private-postgres.ts; the
 * shared POSTGRES_URL server is not touched), submissions in a steady stream, attempts running. The
 * server is stopped (`pg_ctl stop -m fast`, and in a second test `-m immediate`: a crash, recovery
 * at the start) for 20 s and started again. During the outage every submission answers 503
 * `STORE_UNAVAILABLE` with Retry-After (never 500), `/readyz` 503 naming the fault; the attempts
 * that were running keep running (their side effects are written during the outage, or after it
 * for those that outlast it) and their
 * completions wait in memory. After the start the service resumes by itself (same process), and
 * every acknowledged (202) task ends SUCCEEDED with exactly one side effect, as does every instance
 * of a cron firing each second throughout.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { PrivatePostgres, startPrivatePostgres, StopMode } from '../helpers/private-postgres';
import { serviceConfigEnv } from '../helpers/service-config';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { readyz, until } from '../helpers/store-fault-http';
import { tempDir } from '../helpers/temp-dir';

/** The outage's length (ms): the one fixed wait of the test. */
const OUTAGE_MS = 20_000;
/** Bound on a service's start (generous: the tests share two cores with other work). */
const START_MS = 60_000;

interface Answer {
  status: number;
  body: any;
  retryAfter: string | null;
  /** performance.now() when the request was sent and when it was answered. */
  sentAt: number;
  answeredAt: number;
}

async function post(url: string, body: unknown): Promise<Answer> {
  const sentAt = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return {
    status: res.status,
    body: text ? JSON.parse(text) : null,
    retryAfter: res.headers.get('retry-after'),
    sentAt,
    answeredAt: performance.now(),
  };
}

/** The side-effect lines so far: one per run of a handler. */
function effectLines(file: string): Array<{ id: string; attempt: number }> {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: string; attempt: number });
}

/** Log lines of the service at `level` or above (pino: 40 warn, 50 error). */
function linesAtLeast(svc: ServiceProcess, level: number): string[] {
  return svc
    .output()
    .split('\n')
    .filter((l) => {
      const m = /"level":(\d+)/.exec(l);
      return m !== null && Number(m[1]) >= level;
    });
}

function outageTest(mode: StopMode): void {
  it(`-m ${mode}: 503 + Retry-After during the outage, attempts keep running, resumes by itself, every acknowledged task once`, async () => {
    const dir = tempDir('scheduler-pg-outage-');
    let pg: PrivatePostgres | null = null;
    let svc: ServiceProcess | null = null;
    try {
      pg = await startPrivatePostgres();
      const effects = path.join(dir.path, 'effects.log');
      const handler = path.join(dir.path, 'effect.js');
      fs.writeFileSync(
        handler,
        `'use strict';
const fs = require('node:fs');
module.exports = (payload, ctx) => new Promise((resolve) => setTimeout(() => {
  fs.appendFileSync(${JSON.stringify(effects)}, JSON.stringify({ id: ctx.taskId, attempt: ctx.attempt }) + '\\n');
  resolve({ ok: true });
}, payload.ms));
`,
      );
      // A 2 s attempt lease: attempts that end during the outage outlive theirs many times over.
      const env = {
        ...serviceConfigEnv(dir.path, { handlers: { effect: handler }, leaseMs: 2000 }),
        SCHEDULER_STORE: 'postgres',
        POSTGRES_URL: pg.url,
        MEMBER_ID: 'outage-member',
        PARTITIONS: '8',
        WORKERS: '2',
        LOG_LEVEL: 'info',
      };
      svc = await startServiceProcess(dir.path, env, START_MS);
      const url = svc.url;
      const pid = svc.child.pid;
      const acked = new Set<string>();
      const submit = async (ms: number): Promise<Answer> => {
        const a = await post(`${url}/api/v1/tasks`, { task_type: 'effect', payload: { ms } });
        if (a.status === 202) acked.add(a.body.task_id);
        return a;
      };
      const count = async (status: string) =>
        ((await (await fetch(`${url}/api/v1/tasks?status=${status}&limit=100`)).json()) as { tasks: unknown[] }).tasks.length;

      // A cron firing every second (the cron evaluator meets the outage too); its instances'
      // side effects are in the same file and must each happen once as well.
      const cron = await post(`${url}/api/v1/cron-tasks`, {
        name: 'every-second',
        cron_expression: '* * * * * *',
        task_type: 'effect',
        payload: { ms: 10 },
        catch_up: 'none',
      });
      expect(cron.status, JSON.stringify(cron.body)).to.equal(201);
      const cronRuns = () => effectLines(effects).filter((e) => !acked.has(e.id)).length;
      await until(() => cronRuns() >= 1, 30_000, 'a cron instance to run');

      // Attempts that are running at the stop: 22 end during the outage, 8 after it (their leases
      // expire in the database meanwhile; they must not be taken for lost once it is back). The
      // service ran at most 32 attempts at once in this setup.
      const long = 22;
      const spanning = 8;
      for (let i = 0; i < long; i++) expect((await submit(6000)).status).to.equal(202);
      for (let i = 0; i < spanning; i++) expect((await submit(OUTAGE_MS + 6000)).status).to.equal(202);
      await until(async () => (await count('RUNNING')) >= long + spanning, 30_000, 'every long attempt running').catch(async (err) => {
        const states = ['SCHEDULED', 'PENDING', 'RUNNING', 'RETRYING', 'SUCCEEDED', 'FAILED', 'DEAD'];
        const counts = await Promise.all(states.map(async (st) => `${st} ${await count(st)}`));
        throw new Error(`${String(err)} (${counts.join(', ')})`);
      });

      // A steady stream of submissions (4 clients), every answer kept.
      const answers: Answer[] = [];
      let loading = true;
      const clients = Array.from({ length: 4 }, async () => {
        while (loading) answers.push(await submit(50));
      });
      await until(() => answers.filter((a) => a.status === 202).length >= 50, 30_000, 'submissions acknowledged before the stop');

      const stopAt = performance.now();
      await pg.stop(mode);
      const downAt = performance.now();
      const effectsAtStop = effectLines(effects).length;
      await until(async () => (await readyz(url)).status === 503, 10_000, '/readyz 503 after the stop');
      const readyz503Ms = Math.round(performance.now() - downAt);
      const r = await readyz(url);
      expect(r.body.status).to.equal('not_ready');
      expect(r.body.store_fault).to.include({ fault: 'connection_lost', recoverable: true });
      await until(() => answers.some((a) => a.sentAt > downAt && a.status === 503), 10_000, 'a submission refused with 503');
      const first503 = answers.find((a) => a.sentAt > downAt && a.status === 503) as Answer;
      const submit503Ms = Math.round(first503.answeredAt - downAt);

      // The outage itself: the one fixed wait.
      await new Promise((res) => setTimeout(res, Math.max(0, OUTAGE_MS - (performance.now() - stopAt))));
      const effectsInOutage = effectLines(effects).length - effectsAtStop;
      const readyzInOutage = await readyz(url);
      expect(readyzInOutage.status).to.equal(503);

      const startAt = performance.now();
      await pg.start();
      const upAt = performance.now();
      await until(async () => (await readyz(url)).status === 200, 30_000, '/readyz 200 after the start');
      const readyMs = Math.round(performance.now() - upAt);
      const cronRunsAtStart = cronRuns();
      await until(() => answers.some((a) => a.sentAt > upAt && a.status === 202), 30_000, 'a submission acknowledged after the start');
      const first202 = answers.find((a) => a.sentAt > upAt && a.status === 202) as Answer;
      const submit202Ms = Math.round(first202.answeredAt - upAt);
      await until(() => answers.filter((a) => a.sentAt > upAt && a.status === 202).length >= 50, 30_000, 'submissions after the start');
      loading = false;
      await Promise.all(clients);

      // Every answer: 202, or 503 STORE_UNAVAILABLE with Retry-After; never 500.
      const others = answers.filter((a) => a.status !== 202 && a.status !== 503);
      expect(
        others.map((a) => [a.status, a.body]),
        'answers other than 202 and 503',
      ).to.deep.equal([]);
      const refused = answers.filter((a) => a.status === 503);
      for (const a of refused) {
        expect(a.body.error.code).to.equal('STORE_UNAVAILABLE');
        expect(Number(a.retryAfter)).to.be.at.least(1);
      }
      // No 202 for a request sent while the server was down.
      const ackedWhileDown = answers.filter((a) => a.sentAt > downAt && a.answeredAt < startAt && a.status === 202);
      expect(ackedWhileDown.length, 'acknowledged while the server was down').to.equal(0);
      // The attempts running at the stop kept running: their side effects happened during the outage.
      expect(effectsInOutage, 'side effects written during the outage').to.be.greaterThan(0);

      await until(
        async () => {
          for (const id of acked) {
            const t = (await (await fetch(`${url}/api/v1/tasks/${id}`)).json()) as { status: string };
            if (t.status !== 'SUCCEEDED') return false;
          }
          return true;
        },
        120_000,
        'every acknowledged task to succeed',
      );
      const runs = new Map<string, number>();
      const attempts = new Map<string, number>();
      for (const { id, attempt } of effectLines(effects)) {
        runs.set(id, (runs.get(id) ?? 0) + 1);
        attempts.set(id, attempt);
      }
      expect(
        [...runs].filter(([, n]) => n > 1),
        'tasks whose side effect happened twice',
      ).to.deep.equal([]);
      expect(
        [...acked].filter((id) => runs.get(id) !== 1),
        'acknowledged tasks without exactly one run',
      ).to.deep.equal([]);
      const laterAttempts = [...attempts.values()].filter((a) => a > 1).length;
      // The cron fires again after the outage.
      await until(() => cronRuns() >= cronRunsAtStart + 2, 30_000, 'the cron to fire after the start');

      // The same process throughout; one fault line, and no stack traces in the log.
      expect(svc.child.pid).to.equal(pid);
      expect(svc.child.exitCode).to.equal(null);
      const faultLines = linesAtLeast(svc, 50).filter((l) => l.includes('store unavailable'));
      expect(faultLines.length, svc.output().slice(-4000)).to.be.within(1, 2);
      expect(faultLines[0]).to.include('connection_lost');
      const withStacks = svc
        .output()
        .split('\n')
        .filter((l) => l.includes('"stack"'));
      expect(withStacks, 'log lines with stack traces').to.deep.equal([]);
      const warnOrWorse = linesAtLeast(svc, 40).length;
      console.log(
        `      -m ${mode}: stop → /readyz 503 in ${readyz503Ms} ms, first 503 submission ${submit503Ms} ms after pg_ctl returned ` +
          `(stop itself took ${Math.round(downAt - stopAt)} ms); ${refused.length} × 503, 0 × 500; ` +
          `${effectsInOutage} side effects during the outage; start → /readyz 200 in ${readyMs} ms, first 202 ${submit202Ms} ms after ` +
          `pg_ctl returned (start took ${Math.round(upAt - startAt)} ms); ${acked.size} acknowledged, each run once ` +
          `(${laterAttempts} as a later attempt), ${cronRuns()} cron instances each run once; ` +
          `${faultLines.length} fault line(s), ${warnOrWorse} lines at warn or above`,
      );
    } finally {
      // The service's log, for a look after the run (OUTAGE_LOG_DIR=<folder>).
      if (svc && process.env.OUTAGE_LOG_DIR) fs.writeFileSync(path.join(process.env.OUTAGE_LOG_DIR, `service-${mode}.log`), svc.output());
      await svc?.kill9();
      pg?.remove();
      dir.remove();
    }
  });
}

describe('PostgreSQL outage under load (real processes, a private server)', function () {
  this.timeout(300_000);
  outageTest('fast');
  outageTest('immediate');
});
