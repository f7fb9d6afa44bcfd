import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { descendantsOf, killOwnTree, killProcessTree, parentPidOf, ProcReader } from '../../src/actors/process-tree';
import { isAlive } from '../helpers/process-files';

/** A `/proc` of `pid → [ppid, comm]`. */
function fakeProc(table: Record<number, [number, string]>): ProcReader {
  return {
    list: () => [...Object.keys(table), 'self', 'sys'],
    read: (file) => {
      const pid = Number(/^\/proc\/(\d+)\/stat$/.exec(file)?.[1]);
      const row = table[pid];
      if (!row) throw new Error('ENOENT');
      return `${pid} (${row[1]}) S ${row[0]} ${pid} ${pid} 0 -1 4194560`;
    },
  };
}

describe('process tree: the processes a worker’s handlers started, killed with it', () => {
  it('parentPidOf reads the field after the command name, whatever the name holds', () => {
    expect(parentPidOf('42 (node) S 7 42 42 0')).to.equal(7);
    expect(parentPidOf('42 (a ) b (c) S 9 42 42 0')).to.equal(9);
    expect(parentPidOf('garbage')).to.equal(null);
  });

  it('killOwnTree signals the processes below this one first, then this process (nothing runs after its own kill)', () => {
    const me = process.pid;
    const proc = fakeProc({ 1: [0, 'init'], [me]: [1, 'worker'], 901: [me, 'sh'], 902: [901, 'sleep'], 903: [1, 'other'] });
    const signalled: number[] = [];
    killOwnTree(proc, (p) => signalled.push(p));
    expect(signalled).to.deep.equal([901, 902, me]);
  });

  it('descendantsOf: children and their children, parents first; not the parent, not others; a vanished entry skipped', () => {
    const proc = fakeProc({ 1: [0, 'init'], 10: [1, 'worker'], 11: [10, 'sh'], 12: [11, 'sleep'], 13: [10, 'x y)'], 20: [1, 'other'] });
    expect(descendantsOf(10, proc)).to.deep.equal([11, 13, 12]);
    expect(descendantsOf(12, proc)).to.deep.equal([]);
    expect(
      descendantsOf(10, {
        list: () => {
          throw new Error('no /proc');
        },
        read: () => '',
      }),
    ).to.deep.equal([]);
    const signalled: number[] = [];
    expect(killProcessTree(10, proc, (p) => signalled.push(p))).to.deep.equal([11, 13, 12]);
    expect(signalled).to.deep.equal([10, 11, 13, 12]);
  });

  it('on this machine: a shell and the sleep it started are found below their parent and killed with it', async function () {
    if (!fs.existsSync('/proc/self/stat')) this.skip();
    const sh = spawn('sh', ['-c', 'sleep 60 & wait'], { stdio: 'ignore' });
    const shPid = sh.pid as number;
    let below: number[] = [];
    for (let i = 0; i < 100 && below.length === 0; i++) {
      below = descendantsOf(shPid);
      if (below.length === 0) await new Promise((r) => setTimeout(r, 10)); // the shell has not forked yet
    }
    expect(below).to.have.length(1);
    const exited = new Promise((resolve) => sh.once('exit', resolve));
    expect(killProcessTree(shPid)).to.deep.equal(below);
    await exited;
    for (let i = 0; i < 100 && isAlive(below[0]); i++) await new Promise((r) => setTimeout(r, 10));
    expect(isAlive(below[0])).to.equal(false);
  });
});
