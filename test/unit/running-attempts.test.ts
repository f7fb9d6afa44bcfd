/**
 * running-attempts.ts (src/actors/dispatcher/): which reports are the dispatcher's own, which
 * attempts may no longer start, and finished attempts taken out of the running map.
 */
import { expect } from 'chai';
import type { RunningAttempt } from '../../src/actors/dispatcher/attempt-watchdog';
import { lateAttempts, runningAttempt, RunningMap, takeFinished } from '../../src/actors/dispatcher/running-attempts';
import { PartitionFences } from '../../src/cluster/partition-fences';
import type { ClaimedTask } from '../../src/domain/task';

const LEASE_MS = 5000;

function run(
  id: string,
  attempt: number,
  workerId: string,
  startedAt: number,
  extra: Partial<ClaimedTask> = {},
  key?: string,
): RunningAttempt {
  const task: ClaimedTask = {
    id,
    attempt,
    taskType: 't',
    payload: null,
    timeoutSeconds: 30,
    idempotencyKey: null,
    dueAt: 0,
    retry: { maxRetries: 1, backoff: 'fixed', delaySeconds: 2 },
    partition: 3,
    tenantId: 'default',
    startedAt,
    ...extra,
  };
  return { task, workerId, startedMono: startedAt, ...(key !== undefined ? { concurrencyKey: key } : {}) };
}

describe('running attempts of the dispatcher', () => {
  it('runningAttempt: only the attempt running here, on the worker named', () => {
    const running: RunningMap = new Map([['a', run('a', 2, 'w1', 0)]]);
    expect(runningAttempt(running, 'a', 2)).to.equal(running.get('a'));
    expect(runningAttempt(running, 'a', 2, 'w1')).to.equal(running.get('a'));
    expect(runningAttempt(running, 'a', 1)).to.equal(undefined);
    expect(runningAttempt(running, 'a', 2, 'w2')).to.equal(undefined);
    expect(runningAttempt(running, 'b', 1)).to.equal(undefined);
  });

  it('lateAttempts: a lease ended, or a partition lost, names the attempt; a hand-over does not', () => {
    const running: RunningMap = new Map([
      ['fresh', run('fresh', 1, 'w1', 10_000)],
      ['old', run('old', 1, 'w1', 10_000 - LEASE_MS)],
      ['other', run('other', 1, 'w1', 10_000, { partition: 4 })],
    ]);
    const items = [...running.values()].map((r) => ({ id: r.task.id, attempt: r.task.attempt }));
    expect([...lateAttempts(running, items, 10_000, LEASE_MS, undefined)]).to.deep.equal(['old']);
    const fences = new PartitionFences();
    fences.grant(3, 7);
    expect([...lateAttempts(running, items, 10_000, LEASE_MS, fences)].sort()).to.deep.equal(['old', 'other']);
    fences.grant(4, 2);
    fences.revoke(4, true); // handed over: its claimed attempts may still start
    expect([...lateAttempts(running, items, 10_000, LEASE_MS, fences)]).to.deep.equal(['old']);
    expect([...lateAttempts(running, [{ id: 'old', attempt: 2 }], 10_000, LEASE_MS, undefined)]).to.deep.equal([]);
  });

  it('takeFinished: completions for attempts running here; stale reports counted, key slots freed', () => {
    const running: RunningMap = new Map([
      ['a', run('a', 1, 'w1', 0, { seq: 41, workflowId: 'wf' })],
      ['b', run('b', 1, 'w1', 0, {}, 'k')],
      ['c', run('c', 1, 'w2', 0)],
    ]);
    let stale = 0;
    const released: string[] = [];
    const durations: number[] = [];
    const hooks = {
      releaseKey: (r: RunningAttempt) => released.push(r.concurrencyKey as string),
      stale: () => stale++,
      observe: (ms: number) => durations.push(ms),
    };
    const ok = { kind: 'succeeded' as const, result: null };
    const completions = takeFinished(
      running,
      [
        { id: 'a', attempt: 1, outcome: ok, durationMs: 12.4 },
        { id: 'b', attempt: 1, outcome: ok, durationMs: 3 },
        { id: 'c', attempt: 1, outcome: ok, durationMs: 1 }, // another worker's
        { id: 'z', attempt: 1, outcome: ok, durationMs: 1 }, // not running here
      ],
      1_000,
      hooks,
      'w1',
    );
    expect(completions.map((c) => [c.taskId, c.state, c.seq, c.workflowId])).to.deep.equal([
      ['a', 'SUCCEEDED', 41, 'wf'],
      ['b', 'SUCCEEDED', undefined, undefined],
    ]);
    expect(stale).to.equal(2);
    expect(released).to.deep.equal(['k']);
    expect(durations).to.deep.equal([12.4, 3]);
    expect([...running.keys()]).to.deep.equal(['c']);
    // The same report again is stale: the attempt was taken out.
    expect(takeFinished(running, [{ id: 'a', attempt: 1, outcome: ok, durationMs: 1 }], 1_000, hooks)).to.deep.equal([]);
    expect(stale).to.equal(3);
  });
});
