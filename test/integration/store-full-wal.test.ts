/**
 * A write refused on a full volume does not keep the volume full (real process, a tmpfs this test
 * mounts). A large workflow on a small volume fills it with the service's own write-ahead log
 * before SQLite refuses it (`SQLITE_FULL`); the frames stay in the WAL file past the last commit,
 * and SQLite starts the file over only at a later write, which the full volume refused. The
 * service stayed 503 `disk_full` until restarted. Now its file watch gives the space back (a
 * TRUNCATE checkpoint) and it resumes by itself, nothing of the refused workflow stored. The
 * tmpfs needs root: without it the test fails with a message, it is not skipped.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { serviceConfigEnv } from '../helpers/service-config';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { errorLines, expectStoreUnavailable, post, readyz, until } from '../helpers/store-fault-http';
import { tempDir } from '../helpers/temp-dir';
import { tmpfs } from '../helpers/tmpfs';
import { skipOnPostgresServices } from '../helpers/service-store';

/** Bound on a service's start (generous: the tests share two cores with other work). */
const START_MS = 60_000;

/** A workflow of `n` noop tasks, each depending on the 30 before it: ~3 MB of JSON, many more bytes of WAL. */
function denseWorkflow(n: number): unknown {
  const tasks = [];
  for (let i = 0; i < n; i++) {
    const dependencies = [];
    for (let j = Math.max(0, i - 30); j < i; j++) dependencies.push(`t${j}`);
    tasks.push({ task_id: `t${i}`, task_type: 'noop', payload: {}, dependencies });
  }
  return { workflow_name: 'dense', tasks };
}

describe('a write refused on a full volume does not keep it full (a 20 MiB tmpfs mounted by the test)', function () {
  if (skipOnPostgresServices('the SQLite write-ahead log on a full volume')) return;
  const dir = tempDir();
  const volume = tmpfs('size=20m');
  const mnt = volume.path;
  let svc: ServiceProcess | null = null;
  after(async () => {
    await svc?.kill9();
    volume.unmount();
    dir.remove();
  });

  it("a large workflow refused with disk_full: the service gives its log's space back and resumes by itself, nothing of the workflow stored", async () => {
    volume.mount();
    // ~300,000 dependencies: over the default workflowMaxDependencies, which would refuse it before any write.
    svc = await startServiceProcess(
      mnt,
      serviceConfigEnv(dir.path, { workflowBodyLimitBytes: 8 * 1024 * 1024, workflowMaxDependencies: 1_000_000 }),
      START_MS,
    );
    const url = svc.url;
    const before = await post(`${url}/api/v1/tasks`, { task_type: 'noop', payload: { n: 1 } });
    expect(before.status).to.equal(202);

    const refused = await post(`${url}/api/v1/workflows`, denseWorkflow(10_000));
    expectStoreUnavailable(refused, 'disk_full');
    const refusedAt = performance.now();

    // Nothing freed by anyone: the service must find the space in its own log.
    await until(async () => (await readyz(url)).status === 200, 20_000, '/readyz 200 without any space freed by hand');
    const resumeMs = Math.round(performance.now() - refusedAt);
    const walBytes = fs.statSync(path.join(mnt, 'scheduler.db-wal')).size;
    const after = await post(`${url}/api/v1/tasks`, { task_type: 'noop', payload: { n: 2 } });
    expect(after.status, JSON.stringify(after.body)).to.equal(202);

    const listed = (await (await fetch(`${url}/api/v1/workflows?limit=100`)).json()) as { workflows: unknown[] };
    expect(listed.workflows, 'workflows stored').to.deep.equal([]);
    for (const id of [before.body.task_id, after.body.task_id]) {
      await until(
        async () => ((await (await fetch(`${url}/api/v1/tasks/${id}`)).json()) as { status: string }).status === 'SUCCEEDED',
        20_000,
        `task ${id} to succeed`,
      );
    }
    const storeErrors = errorLines(svc).filter((l) => l.includes('store unavailable'));
    expect(storeErrors, svc.output().slice(-4000)).to.have.length(1);
    console.log(`      refused workflow (${refused.status} disk_full) → ready again in ${resumeMs} ms, WAL ${walBytes} bytes after`);
  });
});
