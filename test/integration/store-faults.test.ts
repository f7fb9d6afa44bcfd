/**
 * Faults of the embedded store under a running service, on real processes: the SQLite file deleted
 * or replaced (`/readyz` 503 within 2 s, submissions 503 `STORE_UNAVAILABLE` with Retry-After, no
 * 202 for a task that is not durable, one error line; a SIGTERM once the attempts running at the
 * delete have ended exits at once, not after `shutdownGraceMs`), a full disk on a small tmpfs
 * this test mounts (503, never 500; the service resumes by itself once space is freed, and every
 * acknowledged task runs exactly once), and the start-up refusals (exit 78, one line naming the
 * file). The tmpfs needs root: without it the test fails with a message, it is not skipped.
 */
import { expect } from 'chai';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net, { AddressInfo } from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { serviceConfigEnv } from '../helpers/service-config';
import { Answer, errorLines, expectStoreUnavailable, post, readyz, until } from '../helpers/store-fault-http';
import { freePort, ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';
import { tmpfs } from '../helpers/tmpfs';
import { makeCorruptStore } from '../helpers/store-files';
import { skipOnPostgresServices } from '../helpers/service-store';

/** Bound on a service's start (generous: the tests share two cores with other work). */
const START_MS = 60_000;

/** Submits `echo` tasks one after another until `stop()` is called; every answer is kept. */
function submitter(url: string) {
  const answers: Answer[] = [];
  let stopped = false;
  const done = (async () => {
    while (!stopped) answers.push(await post(`${url}/api/v1/tasks`, { task_type: 'echo', payload: { n: answers.length } }));
  })();
  return {
    answers,
    async stop() {
      stopped = true;
      await done;
    },
  };
}

describe('store faults under a running service (real processes)', function () {
  // PostgreSQL outages: test/chaos/postgres-outage.test.ts.
  if (skipOnPostgresServices('faults of the SQLite file (deleted, replaced, disk full, refused at start)')) return;
  this.timeout(180_000);

  describe('the SQLite file deleted or replaced', () => {
    let svc: ServiceProcess | null = null;
    const dir = tempDir();
    afterEach(async () => {
      await svc?.kill9();
      svc = null;
    });
    after(() => dir.remove());

    it('deleted while idle: the watch turns /readyz 503 within 2 s; submissions get 503 STORE_UNAVAILABLE + Retry-After; one error line', async () => {
      const data = fs.mkdtempSync(path.join(dir.path, 'deleted-'));
      svc = await startServiceProcess(data, {}, START_MS);
      const file = path.join(data, 'scheduler.db');
      expect((await post(`${svc.url}/api/v1/tasks`, { task_type: 'echo' })).status).to.equal(202);
      fs.rmSync(file);
      const t0 = performance.now();
      await until(async () => (await readyz((svc as ServiceProcess).url)).status === 503, 2000, '/readyz 503 after the delete');
      const detectMs = Math.round(performance.now() - t0);
      const r = await readyz(svc.url);
      expect(r.body.status).to.equal('not_ready');
      expect(r.body.store_fault).to.include({ fault: 'file_deleted', target: file, recoverable: false });
      for (let i = 0; i < 5; i++) expectStoreUnavailable(await post(`${svc.url}/api/v1/tasks`, { task_type: 'echo' }), 'file_deleted');
      const errors = errorLines(svc);
      expect(errors, svc.output()).to.have.length(1);
      expect(errors[0]).to.include(`store unavailable: file_deleted on ${file}`);
      expect(fs.existsSync(file)).to.equal(false); // nothing created an empty store in its place
      console.log(`      delete → /readyz 503 in ${detectMs} ms`);
    });

    it('deleted while attempts run: a SIGTERM after they ended exits at once, not after shutdownGraceMs; their lost completions are not counted as running', async () => {
      const data = fs.mkdtempSync(path.join(dir.path, 'deleted-drain-'));
      const graceMs = 30_000;
      // debug: the dispatcher's `completions kept until the store takes writes` lines say when all have ended
      svc = await startServiceProcess(data, { ...serviceConfigEnv(data, { shutdownGraceMs: graceMs }), LOG_LEVEL: 'debug' }, START_MS);
      const url = svc.url;
      const ids: string[] = [];
      for (let i = 0; i < 10; i++)
        ids.push((await post(`${url}/api/v1/tasks`, { task_type: 'sleep', payload: { ms: 1500 } })).body.task_id);
      const state = async (id: string) => ((await (await fetch(`${url}/api/v1/tasks/${id}`)).json()) as { status: string }).status;
      await until(async () => (await Promise.all(ids.map(state))).every((s) => s === 'RUNNING'), 10_000, 'all 10 attempts running');
      fs.rmSync(path.join(data, 'scheduler.db'));
      await until(async () => (await readyz(url)).status === 503, 2000, '/readyz 503 after the delete');
      await until(() => (svc as ServiceProcess).output().includes('"kept":10'), 10_000, 'the 10 attempts ended, their completions kept');
      const t0 = performance.now();
      await svc.stop(graceMs + 10_000);
      const tookMs = Math.round(performance.now() - t0);
      expect(svc.child.exitCode, svc.output()).to.equal(0);
      expect(tookMs, 'nothing runs: the drain does not wait for completions no write can take').to.be.below(5000);
      expect(svc.output()).to.include('"unwritten":10');
      expect(svc.output()).not.to.include('stillRunning');
      console.log(`      delete, attempts ended → SIGTERM exit in ${tookMs} ms (shutdownGraceMs ${graceMs})`);
    });

    it('replaced under a stream of submissions: no 202 for a request sent after the replace, 503 + Retry-After, /readyz 503 within 2 s', async () => {
      const data = fs.mkdtempSync(path.join(dir.path, 'replaced-'));
      svc = await startServiceProcess(data, {}, START_MS);
      const file = path.join(data, 'scheduler.db');
      const url = svc.url;
      const load = submitter(url);
      await until(() => load.answers.filter((a) => a.status === 202).length >= 20, 10_000, 'submissions acknowledged before the replace');
      const other = path.join(data, 'other.db');
      fs.copyFileSync(file, other);
      fs.renameSync(other, file); // another inode at the path: the service's writes go to a file nobody reads
      const replacedAt = performance.now();
      await until(async () => (await readyz(url)).status === 503, 2000, '/readyz 503 after the replace');
      const detectMs = Math.round(performance.now() - replacedAt);
      await until(() => load.answers.filter((a) => a.startedAt > replacedAt).length >= 20, 10_000, 'submissions after the replace');
      await load.stop();
      const afterReplace = load.answers.filter((a) => a.startedAt > replacedAt);
      for (const a of afterReplace) expectStoreUnavailable(a, 'file_replaced');
      expect(load.answers.filter((a) => a.status !== 202 && a.status !== 503)).to.deep.equal([]);
      expect(errorLines(svc), svc.output()).to.have.length(1);
      console.log(
        `      replace → /readyz 503 in ${detectMs} ms; ${load.answers.filter((a) => a.status === 202).length} acknowledged before, ` +
          `${afterReplace.length} refused after (all 503)`,
      );
    });
  });

  describe('a full disk (a 16 MiB tmpfs mounted by the test)', () => {
    const dir = tempDir();
    const volume = tmpfs('size=16m');
    const mnt = volume.path;
    let svc: ServiceProcess | null = null;
    after(async () => {
      await svc?.kill9();
      volume.unmount();
      dir.remove();
    });

    it('503 + Retry-After, never 500; after space is freed the service resumes by itself and every acknowledged task ran exactly once', async () => {
      volume.mount();
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
      // A 1 s lease: attempts that end during the outage outlive their lease many times over.
      const env = { ...serviceConfigEnv(dir.path, { handlers: { effect: handler }, leaseMs: 1000 }), WORKERS: '2' };
      svc = await startServiceProcess(mnt, env, START_MS);
      const url = svc.url;
      const acked = new Set<string>();
      const submit = async (ms: number): Promise<Answer> => {
        const a = await post(`${url}/api/v1/tasks`, { task_type: 'effect', payload: { ms } });
        if (a.status === 202) acked.add(a.body.task_id);
        return a;
      };
      // Tasks that are running when the disk fills, and end during the outage.
      for (let i = 0; i < 40; i++) expect((await submit(4000)).status).to.equal(202);
      const count = async (status: string) =>
        ((await (await fetch(`${url}/api/v1/tasks?status=${status}&limit=100`)).json()) as { tasks: unknown[] }).tasks.length;
      await until(
        async () => (await count('PENDING')) + (await count('SCHEDULED')) === 0 && (await count('RUNNING')) > 0,
        30_000,
        'every attempt started, some still running',
      );
      const runningAtFill = await count('RUNNING');

      const filler = path.join(mnt, 'filler');
      const fd = fs.openSync(filler, 'w');
      const chunk = Buffer.alloc(1 << 20, 1);
      try {
        for (;;) fs.writeSync(fd, chunk);
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).to.equal('ENOSPC');
      }
      try {
        for (;;) fs.writeSync(fd, chunk, 0, 4096); // the last pages
      } catch {
        /* full */
      }
      fs.closeSync(fd);
      const fullAt = performance.now();

      const answers: Answer[] = [];
      await until(
        async () => {
          answers.push(await submit(10));
          return (await readyz(url)).status === 503;
        },
        15_000,
        '/readyz 503 on the full disk',
      );
      const detectMs = Math.round(performance.now() - fullAt);
      const r = await readyz(url);
      expect(r.body.store_fault).to.include({ fault: 'disk_full', recoverable: true });
      // The attempts running at the fill end during the outage; their completions wait in memory.
      await until(
        () => fs.existsSync(effects) && fs.readFileSync(effects, 'utf8').split('\n').length > 40,
        30_000,
        'the running attempts to end',
      );
      const endedInOutage = fs.readFileSync(effects, 'utf8').split('\n').filter(Boolean).length;
      // An outage of several leases: no attempt may be taken for lost meanwhile.
      const outageEnds = Date.now() + 4000;
      while (Date.now() < outageEnds) {
        answers.push(await submit(10));
        await new Promise((r) => setTimeout(r, 20)); // a client's pace, not a timing assumption
      }
      for (const a of answers.filter((x) => x.status !== 202)) expectStoreUnavailable(a, 'disk_full');
      const refused = answers.filter((a) => a.status === 503).length;
      expect(refused).to.be.greaterThan(0);

      fs.rmSync(filler);
      const freedAt = performance.now();
      await until(async () => (await readyz(url)).status === 200, 15_000, '/readyz 200 after space was freed');
      const resumeMs = Math.round(performance.now() - freedAt);
      for (let i = 0; i < 20; i++) expect((await submit(10)).status).to.equal(202);

      await until(
        async () => {
          for (const id of acked) {
            const t = (await (await fetch(`${url}/api/v1/tasks/${id}`)).json()) as { status: string };
            if (t.status !== 'SUCCEEDED') return false;
          }
          return true;
        },
        60_000,
        'every acknowledged task to succeed',
      );
      const runs = new Map<string, number>();
      for (const line of fs.readFileSync(effects, 'utf8').split('\n').filter(Boolean)) {
        const { id, attempt } = JSON.parse(line) as { id: string; attempt: number };
        expect(attempt, `task ${id} ran as attempt ${attempt}`).to.equal(1);
        runs.set(id, (runs.get(id) ?? 0) + 1);
      }
      const twice = [...runs].filter(([, n]) => n > 1);
      expect(twice, 'tasks whose side effect happened twice').to.deep.equal([]);
      expect(
        [...acked].filter((id) => runs.get(id) !== 1),
        'acknowledged tasks without exactly one run',
      ).to.deep.equal([]);
      const storeErrors = errorLines(svc).filter((l) => l.includes('store unavailable'));
      expect(storeErrors, svc.output().slice(-4000)).to.have.length(1);
      expect(storeErrors[0]).to.include('disk_full');
      console.log(
        `      full disk → /readyz 503 in ${detectMs} ms; ${answers.length} submissions during the outage: ${refused} × 503, ` +
          `${answers.length - refused} × 202, 0 × 500; ${runningAtFill} attempts running at the fill, ${endedInOutage} side effects by the end of the outage; ` +
          `freed → ready in ${resumeMs} ms; ${acked.size} acknowledged, each run once`,
      );
    });
  });

  describe('start-up refusals (exit 78, one line naming the file)', () => {
    const dir = tempDir();
    after(() => dir.remove());
    const main = path.resolve(__dirname, '..', '..', 'src', 'main.js');

    /** Starts the service on `sqlitePath` and returns how it ended (bounded: a service that starts is killed). */
    async function startOn(sqlitePath: string, env: Record<string, string> = {}) {
      const port = await freePort();
      const r = spawnSync(process.execPath, [main], {
        env: { ...process.env, REDIS_URL: '', NODE_ENV: 'test', PORT: String(port), LOG_LEVEL: 'warn', SQLITE_PATH: sqlitePath, ...env },
        timeout: 20_000,
        encoding: 'utf8',
      });
      return { code: r.status, stderr: r.stderr.trim(), stdout: r.stdout.trim() };
    }

    function expectRefusal(r: { code: number | null; stderr: string }, names: string, says: RegExp): void {
      expect(r.code, r.stderr).to.equal(78);
      expect(r.stderr.split('\n'), r.stderr).to.have.length(1);
      expect(r.stderr).to.include(names);
      expect(r.stderr).to.match(says);
      expect(r.stderr).not.to.match(/\n\s+at /);
    }

    it('the port in use: exit 78 with one line naming HOST:PORT, and the store released for the next start', async () => {
      const taken = net.createServer();
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const port = (taken.address() as AddressInfo).port;
      const file = path.join(dir.path, 'port.db');
      try {
        expectRefusal(await startOn(file, { PORT: String(port) }), `127.0.0.1:${port}`, /the port is in use by another process/);
      } finally {
        taken.close();
      }
      const svc = await startServiceProcess(path.dirname(file), { SQLITE_PATH: file, NODE_ENV: 'test' }, START_MS);
      await svc.kill9();
    });

    it('a HOST that does not resolve, or that no interface has: exit 78 with one line naming HOST:PORT, no stack, and no store file made', async () => {
      const file = path.join(dir.path, 'host.db');
      const r = await startOn(file, { HOST: 'nonexistent.invalid', ALLOW_UNAUTHENTICATED: 'true' });
      expectRefusal(r, 'nonexistent.invalid:', /cannot listen on .*: the host name does not resolve \((ENOTFOUND|EAI_AGAIN)/);
      expect(fs.existsSync(file), 'the store was created for a service that never listened').to.equal(false);
      // An address no interface of this machine has (TEST-NET-1, RFC 5737): the same, before the store.
      const other = path.join(dir.path, 'host-addr.db');
      const r2 = await startOn(other, { HOST: '192.0.2.1', ALLOW_UNAUTHENTICATED: 'true' });
      expectRefusal(r2, '192.0.2.1:', /cannot listen on .*: no interface of this machine has that address/);
      expect(fs.existsSync(other), 'the store was created for a service that never listened').to.equal(false);
    });

    it('a corrupt store', async () => {
      const file = path.join(dir.path, 'corrupt.db');
      await makeCorruptStore(file);
      const r = await startOn(file);
      expectRefusal(r, file, /is corrupt .*restore it from a backup/);
      console.log(`      corrupt → exit ${r.code}: ${r.stderr}`);
    });

    it('a foreign (non-SQLite) file, left untouched', async () => {
      const file = path.join(dir.path, 'foreign.db');
      fs.writeFileSync(file, '#!/bin/sh\necho this is not a database\n'.repeat(20));
      const before = fs.readFileSync(file);
      const r = await startOn(file);
      expectRefusal(r, file, /is not a SQLite database/);
      expect(fs.readFileSync(file).equals(before)).to.equal(true);
      console.log(`      foreign → exit ${r.code}: ${r.stderr}`);
    });

    it('a missing directory (not created), and created when SQLITE_CREATE_DIR=true', async () => {
      const file = path.join(dir.path, 'not-mounted', 'data', 'scheduler.db');
      const r = await startOn(file);
      expectRefusal(r, path.dirname(file), /does not exist .*SQLITE_CREATE_DIR=true/);
      expect(fs.existsSync(path.join(dir.path, 'not-mounted'))).to.equal(false);
      console.log(`      missing directory → exit ${r.code}: ${r.stderr}`);
      const created = fs.mkdtempSync(path.join(dir.path, 'create-'));
      const svc = await startServiceProcess(path.join(created, 'new', 'dir'), { SQLITE_CREATE_DIR: 'true' }, START_MS);
      await svc.stop();
      expect(fs.existsSync(path.join(created, 'new', 'dir', 'scheduler.db'))).to.equal(true);
    });

    it('an empty store file beside its .lock (a truncated store): refused, not started as an empty store', async () => {
      const file = path.join(dir.path, 'truncated.db');
      fs.writeFileSync(file, '');
      fs.writeFileSync(`${file}.lock`, '');
      const r = await startOn(file);
      expectRefusal(r, file, /is empty \(0 bytes\), but .*\.lock shows a store was used here/);
    });

    it('a full volume at start-up: exit 78 with one line, and no .lock left behind to block the next start', async () => {
      const volume = tmpfs('size=1m', 'scheduler-full-');
      const full = volume.path;
      try {
        volume.mount();
        // Fill the volume: the writes stop at ENOSPC.
        try {
          execFileSync('dd', ['if=/dev/zero', `of=${path.join(full, 'fill')}`, 'bs=64k'], { stdio: 'pipe' });
        } catch {
          /* no space left: the point */
        }
        const file = path.join(full, 'scheduler.db');
        const r = await startOn(file);
        expect(r.code, r.stderr).to.equal(78);
        expect(r.stderr.split('\n'), r.stderr).to.have.length(1);
        expect(r.stderr).to.include(file);
        expect(r.stderr).not.to.match(/\n\s+at /);
        expect(fs.existsSync(`${file}.lock`), 'a lock created by the failed start').to.equal(false);
      } finally {
        volume.unmount();
      }
    });

    it('an unwritable directory (a read-only tmpfs mounted by the test)', async () => {
      const volume = tmpfs('ro,size=1m', 'scheduler-ro-');
      const ro = volume.path;
      try {
        volume.mount();
        const r = await startOn(path.join(ro, 'scheduler.db'));
        expectRefusal(r, ro, /is not writable by this process/);
        console.log(`      unwritable directory → exit ${r.code}: ${r.stderr}`);
      } finally {
        volume.unmount();
      }
    });
  });
});
