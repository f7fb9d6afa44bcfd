import { expect } from 'chai';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { http } from '../helpers/http';
import { ServiceProcess, startServiceProcess } from '../helpers/service-process';
import { tempDir } from '../helpers/temp-dir';
import { skipOnPostgresServices } from '../helpers/service-store';

const BIN = path.resolve(__dirname, '..', '..', '..', 'bin', 'scheduler');

/** Runs `bin/scheduler args…` with `env`; resolves with its exit code and output. */
function cli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, NODE_ENV: 'test', ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Every task id in the service, through the list's pages. */
async function allTaskIds(url: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | null = null;
  do {
    const res = await http('GET', `${url}/api/v1/tasks?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(res.status).to.equal(200);
    for (const t of res.body.tasks as Array<{ task_id: string }>) ids.add(t.task_id);
    cursor = res.body.next_cursor;
  } while (cursor);
  return ids;
}

describe('scheduler backup: an online copy of the SQLite store, and its restore', function () {
  if (skipOnPostgresServices('`scheduler backup` copies the SQLite file (PostgreSQL is backed up with pg_dump)')) return;
  this.timeout(90_000);
  const dir = tempDir();
  const services: ServiceProcess[] = [];
  afterEach(async () => {
    for (const s of services.splice(0)) await s.stop();
  });
  after(() => dir.remove());

  it('a backup taken while tasks are being submitted restores every task acknowledged before it started', async () => {
    const live = path.join(dir.path, 'live');
    fs.mkdirSync(live);
    const svc = await startServiceProcess(live, { WORKERS: '1' });
    services.push(svc);
    // Submitters: single tasks and batches of 20, each ack recorded with the time it arrived.
    const acked: Array<{ id: string; at: number }> = [];
    let submitting = true;
    const submitter = async (batch: boolean) => {
      while (submitting) {
        const at = () => Date.now();
        if (batch) {
          const res = await http('POST', `${svc.url}/api/v1/tasks/batch`, {
            tasks: Array.from({ length: 20 }, () => ({ task_type: 'noop' })),
          });
          expect(res.status).to.equal(202);
          const now = at();
          for (const t of res.body.tasks as Array<{ task_id: string }>) acked.push({ id: t.task_id, at: now });
        } else {
          const res = await http('POST', `${svc.url}/api/v1/tasks`, { task_type: 'echo', payload: { n: acked.length } });
          expect(res.status).to.equal(202);
          acked.push({ id: res.body.task_id, at: at() });
        }
      }
    };
    const failures: unknown[] = [];
    const submitters = [submitter(true), submitter(true), submitter(false), submitter(false)].map((p) =>
      p.catch((err) => failures.push(err)),
    );
    try {
      // Waits for submitted work, not for time.
      while (acked.length < 2000 && failures.length === 0) await new Promise((r) => setTimeout(r, 20));
      expect(failures).to.deep.equal([]);
      const backupFile = path.join(dir.path, 'backup', 'scheduler-backup.db');
      fs.mkdirSync(path.dirname(backupFile));
      const backupStart = Date.now();
      const backup = await cli(['backup', '--to', backupFile, '--json'], { SQLITE_PATH: path.join(live, 'scheduler.db') });
      const backupEnd = Date.now();
      expect(backup.code, backup.stderr).to.equal(0);
      const result = JSON.parse(backup.stdout);
      expect(result.destination).to.equal(backupFile);
      expect(result.bytes).to.be.greaterThan(0);
      const during = acked.filter((a) => a.at >= backupStart && a.at <= backupEnd).length;
      expect(during, 'submissions acknowledged while the backup ran').to.be.greaterThan(0);
      submitting = false;
      await Promise.all(submitters);
      expect(failures).to.deep.equal([]);
      const before = acked.filter((a) => a.at < backupStart);
      await svc.stop();
      // The restore procedure of docs/OPERATIONS.md: the copy in place of the store, no -wal or -shm beside it.
      const restoredDir = path.join(dir.path, 'restored');
      fs.mkdirSync(restoredDir);
      fs.copyFileSync(backupFile, path.join(restoredDir, 'scheduler.db'));
      const restored = await startServiceProcess(restoredDir, { WORKERS: '1' });
      services.push(restored);
      const ids = await allTaskIds(restored.url);
      const lost = before.filter((a) => !ids.has(a.id)).map((a) => a.id);
      expect(lost, `${lost.length} of ${before.length} tasks acknowledged before the backup started are missing`).to.deep.equal([]);
      expect(before.length).to.be.greaterThan(1000);
      // The restored service runs new work.
      const res = await http('POST', `${restored.url}/api/v1/tasks`, { task_type: 'noop' });
      expect(res.status).to.equal(202);
    } finally {
      submitting = false;
      await Promise.all(submitters);
    }
  });

  it('refuses, with one line and exit 2: an existing destination (unless --force), a missing store, a MongoDB store, an empty path, a --url', async () => {
    const store = path.join(dir.path, 'refusals', 'scheduler.db');
    fs.mkdirSync(path.dirname(store));
    const svc = await startServiceProcess(path.dirname(store), { WORKERS: '1' });
    services.push(svc);
    const dest = path.join(dir.path, 'refusals', 'copy.db');
    fs.writeFileSync(dest, 'older backup');
    const exists = await cli(['backup', '--to', dest], { SQLITE_PATH: store });
    expect(exists.code).to.equal(2);
    expect(exists.stderr.trim()).to.match(/^error: backup: .*copy\.db exists; remove it or pass --force$/);
    expect(fs.readFileSync(dest, 'utf8')).to.equal('older backup');
    const forced = await cli(['backup', '--to', dest, '--force', '--sqlite-path', store], {});
    expect(forced.code, forced.stderr).to.equal(0);
    expect(forced.stdout).to.match(/^backed up .*scheduler\.db to .*copy\.db: \d+ bytes\n$/);
    const missing = await cli(['backup', '--to', path.join(dir.path, 'x.db')], {
      SQLITE_PATH: path.join(dir.path, 'nowhere', 'scheduler.db'),
    });
    expect(missing.code).to.equal(2);
    expect(missing.stderr.trim()).to.match(/^error: backup: no store at .*nowhere\/scheduler\.db \(SQLITE_PATH\)$/);
    const mongo = await cli(['backup', '--to', path.join(dir.path, 'y.db')], {
      SCHEDULER_STORE: 'mongodb',
      MONGODB_URI: 'mongodb://127.0.0.1:1/x',
    });
    expect(mongo.code).to.equal(2);
    expect(mongo.stderr).to.contain('mongodump');
    // --url names a service, not a file on this host: refused rather than ignored.
    const remote = await cli(['--url', 'http://10.0.0.9:8080', 'backup', '--to', path.join(dir.path, 'z.db'), '--sqlite-path', store], {});
    expect(remote.code).to.equal(2);
    expect(remote.stderr.trim()).to.match(/^error: backup: --url does not apply: backup copies the SQLite file of a service on this host/);
    expect(fs.existsSync(path.join(dir.path, 'z.db'))).to.equal(false);
    // An empty path is not the working directory.
    const empty = await cli(['backup', '--to', '', '--sqlite-path', store], {});
    expect(empty.code).to.equal(2);
    expect(empty.stderr.trim()).to.match(/^error: backup: --to needs a file path, not an empty one$/);
    // The running store's own lock and WAL are never a destination, even with --force.
    for (const companion of ['.lock', '-wal']) {
      const own = await cli(['backup', '--to', `${store}${companion}`, '--force'], { SQLITE_PATH: store });
      expect(own.code, own.stderr).to.equal(2);
      expect(own.stderr.trim()).to.match(new RegExp(`^error: backup: .*scheduler\\.db${companion} is the store's own ${companion} file`));
    }
    // Nor through a symbolic link to the store's folder (it replaced the running store before).
    const alias = path.join(dir.path, 'alias');
    fs.symlinkSync(path.dirname(store), alias);
    for (const [name, says] of [
      ['scheduler.db', 'is the store itself'],
      ['scheduler.db-wal', "is the store's own -wal file"],
    ]) {
      const through = await cli(['backup', '--to', path.join(alias, name), '--force'], { SQLITE_PATH: store });
      expect(through.code, through.stderr).to.equal(2);
      expect(through.stderr).to.include(says);
    }
    // And never over something that is not a regular file (a named pipe here; it replaced /dev/full before).
    const fifo = path.join(dir.path, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const special = await cli(['backup', '--to', fifo, '--force'], { SQLITE_PATH: store });
    expect(special.code, special.stderr).to.equal(2);
    expect(special.stderr).to.include('is not a regular file');
    expect(fs.statSync(fifo).isFIFO(), 'the pipe is still there').to.equal(true);
    expect((await http('GET', `${svc.url}/readyz`)).status).to.equal(200);
    // A destination under a file: one line, no stack.
    const under = await cli(['backup', '--to', path.join(dest, 'sub.db')], { SQLITE_PATH: store });
    expect(under.code, under.stderr).to.equal(2);
    expect(under.stderr.trim().split('\n'), under.stderr).to.have.length(1);
    const files = fs.readdirSync(path.join(dir.path, 'refusals'));
    expect(
      files.filter((f) => f.includes('.partial-')),
      'no partial file left',
    ).to.deep.equal([]);
  });
});
