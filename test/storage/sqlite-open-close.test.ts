/**
 * SQLite-specific: a close called while the store opens (the open waits for its writer thread to
 * run) and two closes at once (src/storage/sqlite/store-connections.ts). The close waits for the
 * open and then ends everything it made: no thread is left running, so the process exits on its
 * own, and the file opens again. Run in a child process, whose exit is what is waited for (a
 * thread left running would keep it alive until the test's timeout).
 */
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PARTITIONS } from './fixtures';

const run = promisify(execFile);
const STORE_MODULE = path.join(__dirname, '../../src/storage/sqlite/sqlite-store.js');

const CHILD = `
const { SqliteStore } = require(process.env.STORE_MODULE);
const file = process.env.STORE_FILE;
const partitions = Number(process.env.PARTITIONS);
(async () => {
  const store = new SqliteStore(file);
  const opened = store.open(partitions).then(() => 'opened', (err) => 'open failed: ' + err.message);
  const [open] = await Promise.all([opened, store.close(), store.close()]);
  const pingAfterClose = await store.ping();
  await store.close();
  const again = new SqliteStore(file);
  await again.open(partitions);
  const pingAgain = await again.ping();
  await again.close();
  process.stdout.write(JSON.stringify({ open, pingAfterClose, pingAgain }));
})().catch((err) => { console.error(err); process.exitCode = 1; });
`;

describe('SQLite store: close during open, and closes at once', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'store-open-close-'));
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a close during the open waits for it and ends every thread; a second close shares it; the file opens again', async () => {
    const { stdout } = await run(process.execPath, ['-e', CHILD], {
      env: { ...process.env, STORE_MODULE, STORE_FILE: path.join(dir, 'scheduler.db'), PARTITIONS: String(PARTITIONS) },
      timeout: 20_000,
    });
    expect(JSON.parse(stdout)).to.deep.equal({ open: 'opened', pingAfterClose: false, pingAgain: true });
  });
});
