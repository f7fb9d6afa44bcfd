import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import { ChildExit, disableRespawn, respawnRetryMs, superviseChild } from '../../src/actors/runtime/comedy';

/**
 * A child process as `child_process.fork` answers it: one whose spawn failed (EMFILE) has no pid
 * and no IPC channel (`send` is missing), and emits `error` on the next tick.
 */
class FakeProcess extends EventEmitter {
  send?: (msg: unknown, cb: (err: Error | null) => void) => void;
  constructor(readonly pid: number | undefined) {
    super();
    if (pid === undefined) {
      process.nextTick(() => this.emit('error', Object.assign(new Error('spawn /usr/bin/node EMFILE'), { code: 'EMFILE' })));
    } else {
      this.send = (_msg, cb) => cb(null);
    }
  }
}

/**
 * The parent side of a forked comedy actor, as comedy 2.1.7 writes `_createForkedWorker`: the
 * fork stored in `workerProcess`, an asynchronous step, then `send` of the creation message, and
 * only then a listener for the process's `error`.
 */
class FakeForkedParent {
  workerProcess?: FakeProcess;
  additionalOptions = { onCrash: 'respawn' };
  forks = 0;
  constructor(private readonly failingForks: number) {}
  getState(): string {
    return 'crashed';
  }
  _createForkedWorker(): Promise<void> {
    return Promise.resolve().then(() => {
      this.forks += 1;
      this.workerProcess = new FakeProcess(this.forks <= this.failingForks ? undefined : 1000 + this.forks);
      return Promise.resolve().then(
        () =>
          new Promise<void>((resolve, reject) => {
            const proc = this.workerProcess as FakeProcess;
            (proc.send as NonNullable<FakeProcess['send']>)({ type: 'create-actor' }, (err) => (err ? reject(err) : resolve()));
            proc.once('error', (err: Error) => reject(err));
            proc.once('exit', () => delete this.workerProcess);
          }),
      );
    });
  }
}

/** A watch that records what it is told; `later` keeps the retry for the test to run. */
function recordingWatch() {
  const seen = {
    exits: [] as ChildExit[],
    failures: [] as Array<{ code: unknown; failures: number; retryInMs: number }>,
    errors: [] as Error[],
  };
  const retries: Array<() => void> = [];
  let told: () => void = () => undefined;
  const watch = {
    exited: (exit: ChildExit) => seen.exits.push(exit),
    respawnFailed: (err: Error, failures: number, retryInMs: number) => {
      seen.failures.push({ code: (err as NodeJS.ErrnoException).code, failures, retryInMs });
      told();
    },
    processError: (err: Error) => seen.errors.push(err),
    later: (fn: () => void, _ms: number) => retries.push(fn),
  };
  const nextFailure = () =>
    new Promise<void>((resolve) => {
      told = resolve;
    });
  return { seen, retries, watch, nextFailure };
}

describe('comedy adapter: a respawn that cannot fork', () => {
  it('is retried with the fork error, not thrown, until a fork succeeds; that process is watched', async () => {
    const parent = new FakeForkedParent(2);
    const { seen, retries, watch, nextFailure } = recordingWatch();
    superviseChild(parent, watch);
    let failure = nextFailure();
    const respawned = parent._createForkedWorker();
    await failure;
    expect(seen.failures).to.deep.equal([{ code: 'EMFILE', failures: 1, retryInMs: 1000 }]);
    failure = nextFailure();
    retries.shift()?.();
    await failure;
    expect(seen.failures[1]).to.deep.equal({ code: 'EMFILE', failures: 2, retryInMs: 2000 });
    retries.shift()?.();
    await respawned;
    expect(parent.forks).to.equal(3);
    expect(retries).to.have.length(0);
    const proc = parent.workerProcess as FakeProcess;
    expect(proc.pid).to.equal(1003);
    proc.emit('error', new Error('kill EPERM'));
    expect(seen.errors.map((e) => e.message)).to.deep.equal(['kill EPERM']);
    proc.emit('exit', 1, null);
    expect(seen.exits).to.deep.equal([{ pid: 1003, code: 1, signal: null }]);
    expect(parent.workerProcess).to.equal(undefined);
  });

  it('stops retrying once respawn is switched off (shutdown)', async () => {
    const parent = new FakeForkedParent(5);
    const { seen, retries, watch, nextFailure } = recordingWatch();
    superviseChild(parent, watch);
    const failure = nextFailure();
    void parent._createForkedWorker();
    await failure;
    disableRespawn(parent);
    retries.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
    expect(parent.forks).to.equal(1);
    expect(seen.failures).to.have.length(1);
    expect(retries).to.have.length(0);
  });

  it('waits 1 s after the first failure, doubling to at most 15 s', () => {
    expect([1, 2, 3, 4, 5, 6, 50].map(respawnRetryMs)).to.deep.equal([1000, 2000, 4000, 8000, 15000, 15000, 15000]);
  });
});
