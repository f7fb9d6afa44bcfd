import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  OPEN_FILES_NETWORK_STORE,
  OPEN_FILES_PER_WORKER,
  OPEN_FILES_START_BASE,
  OpenFiles,
  OpenFilesWatch,
  openFilesRefusal,
  readOpenFiles,
} from '../../src/observability/open-files-watch';

/** A log that keeps its lines. */
function recordingLog() {
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  return {
    lines,
    log: {
      warn: (obj: Record<string, unknown>, msg: string) => lines.push({ level: 'warn', obj, msg }),
      info: (obj: Record<string, unknown>, msg: string) => lines.push({ level: 'info', obj, msg }),
    } as never,
  };
}

describe('open files watch', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  /** A fake `/proc/<pid>` with `open` entries in fd/ and `limit` in limits ('unlimited' or a number). */
  function fakeProc(open: number, limit: string | null): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fake-proc-'));
    dirs.push(dir);
    fs.mkdirSync(path.join(dir, 'fd'));
    for (let i = 0; i < open; i++) fs.writeFileSync(path.join(dir, 'fd', String(i)), '');
    if (limit !== null) {
      fs.writeFileSync(
        path.join(dir, 'limits'),
        'Limit                     Soft Limit           Hard Limit           Units\n' +
          'Max cpu time              unlimited            unlimited            seconds\n' +
          `Max open files            ${limit}                 4096                 files\n`,
      );
    }
    return dir;
  }

  it('reads the open descriptors and the soft limit of a /proc directory', () => {
    expect(readOpenFiles(fakeProc(7, '64'))).to.deep.equal({ open: 7, limit: 64 });
    expect(readOpenFiles(fakeProc(7, 'unlimited'))).to.equal(null);
    expect(readOpenFiles(fakeProc(7, null))).to.equal(null);
    expect(readOpenFiles(fakeProc(7, null), 100), 'the limit read before').to.deep.equal({ open: 7, limit: 100 });
    expect(readOpenFiles('/nonexistent/proc')).to.equal(null);
  });

  it('this process: a reading below its limit', function () {
    if (!fs.existsSync('/proc/self/limits')) this.skip();
    const now = readOpenFiles();
    expect(now).to.not.equal(null);
    expect(now!.open).to.be.above(2).and.below(now!.limit);
  });

  it('warns once at 90 % of the limit, and says once when back under 75 %', () => {
    const { lines, log } = recordingLog();
    const readings: OpenFiles[] = [50, 89, 90, 100, 95, 80, 74, 74, 91].map((open) => ({ open, limit: 100 }));
    const limitsSeen: Array<number | undefined> = [];
    const watch = new OpenFilesWatch(log, (known) => {
      limitsSeen.push(known);
      return readings.shift() ?? null;
    });
    for (let i = 0; i < 10; i++) watch.check();
    expect(lines.map((l) => `${l.level} ${l.obj.open_files}/${l.obj.open_files_limit}`)).to.deep.equal([
      'warn 90/100',
      'info 74/100',
      'warn 91/100',
    ]);
    expect(lines[0].msg).to.match(/near their limit/);
    expect(limitsSeen.slice(0, 2)).to.deep.equal([undefined, 100]);
  });

  it('refuses a start under its floor: the base, each worker process, and a network store', () => {
    const floor = OPEN_FILES_START_BASE + 2 * OPEN_FILES_PER_WORKER;
    expect(openFilesRefusal({ open: 10, limit: floor }, 2, false)).to.equal(null);
    expect(openFilesRefusal(null, 2, false), 'limit unknown').to.equal(null);
    expect(openFilesRefusal({ open: 10, limit: floor - 1 }, 2, false)).to.equal(
      `open files limit ${floor - 1} is below the ${floor} this service needs to start with 2 worker process(es)` +
        ' (every connection, file, thread pipe and worker channel holds one): raise it (ulimit -n, LimitNOFILE=, docker --ulimit nofile=) to thousands',
    );
    expect(openFilesRefusal({ open: 10, limit: floor }, 3, false)).to.match(/below the \d+ .* 3 worker process/);
    expect(openFilesRefusal({ open: 10, limit: floor }, 2, true)).to.include(`below the ${floor + OPEN_FILES_NETWORK_STORE} `);
  });
});
