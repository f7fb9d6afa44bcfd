import { expect } from 'chai';
import type { ClaimedTask } from '../../src/domain/task';
import { takeWorkItem } from '../../src/actors/dispatcher/work-item';

const T0 = Date.UTC(2026, 0, 1);

function claimed(over: Partial<ClaimedTask> = {}): ClaimedTask {
  return {
    id: 't1',
    attempt: 2,
    taskType: 'echo',
    payload: { blob: 'x'.repeat(1000) },
    timeoutSeconds: 30,
    idempotencyKey: 'k',
    dueAt: T0,
    retry: { maxRetries: 3, backoff: 'fixed', delaySeconds: 1 },
    partition: 3,
    tenantId: 'acme',
    startedAt: T0 + 5,
    ...over,
  };
}

describe('takeWorkItem', () => {
  it('moves the body into the run entry: the claimed task the dispatcher keeps while the attempt runs holds none of it', () => {
    const payload = { blob: 'x'.repeat(1000) };
    const upstreamResults = { a: { rows: [1, 2, 3] } };
    const lastCheckpoint = { page: 7 };
    const t = claimed({ payload, upstreamResults, lastCheckpoint });
    const item = takeWorkItem(t);
    expect(item).to.deep.equal({
      id: 't1',
      attempt: 2,
      taskType: 'echo',
      payload,
      timeoutMs: 30_000,
      idempotencyKey: 'k',
      upstreamResults,
      lastCheckpoint,
    });
    expect(item.payload).to.equal(payload);
    expect(t.payload).to.equal(null);
    expect(t.upstreamResults).to.equal(undefined);
    expect(t.lastCheckpoint).to.equal(undefined);
    // What the dispatcher reads of a running attempt stays.
    expect(t).to.include({ id: 't1', attempt: 2, taskType: 'echo', partition: 3, tenantId: 'acme', dueAt: T0, startedAt: T0 + 5 });
  });

  it('sends a checkpoint of null (saved as null) but no checkpoint when none was saved', () => {
    expect(takeWorkItem(claimed({ lastCheckpoint: null }))).to.have.property('lastCheckpoint', null);
    expect(takeWorkItem(claimed())).to.not.have.any.keys('lastCheckpoint', 'upstreamResults', 'traceparent');
  });
});
