import { expect } from 'chai';
import { attemptCompletion } from '../../src/domain/attempt-completion';
import { recycledOutcome, WORKER_RECYCLED } from '../../src/domain/lost-attempt';
import { decideAttempt } from '../../src/domain/retry-policy';
import type { RetrySettings } from '../../src/domain/task';

const NO_RETRIES: RetrySettings = { maxRetries: 0, backoff: 'fixed', delaySeconds: 30 };

/** Who pays for a kill: an attempt killed with its process to stop another one is retried free. */
describe('free retries (worker_recycled)', () => {
  it('a recycled attempt retries at once even with no retries left; a charged one of the same task is DEAD', () => {
    expect(decideAttempt(recycledOutcome('x'), 1, NO_RETRIES, 1000)).to.deep.equal({ state: 'RETRYING', retryAt: 1000 });
    expect(decideAttempt(recycledOutcome('x'), 7, { ...NO_RETRIES, attemptBase: 2 }, 1000).state).to.equal('RETRYING');
    const charged = { kind: 'failed', message: 'lost', errorType: 'worker_lost', permanent: false } as const;
    expect(decideAttempt(charged, 1, NO_RETRIES, 1000).state).to.equal('DEAD');
  });

  it('its completion is a free retry (the store moves attemptBase on) with a worker_recycled error', () => {
    const c = attemptCompletion('t1', 1, recycledOutcome('attempt t9 past its timeout'), NO_RETRIES, 5000, 12);
    expect(c).to.deep.include({ taskId: 't1', attempt: 1, state: 'RETRYING', retryAt: 5000, freeRetry: true, durationMs: 12 });
    expect(c.error).to.deep.include({ type: WORKER_RECYCLED, retryable: true });
    expect(c.error?.message).to.contain('attempt t9 past its timeout').and.contain('without counting against its retries');
  });

  it('the next attempt counts from the moved budget: attempt 2 of a max_retries 0 task that fails is DEAD', () => {
    const charged = { kind: 'failed', message: 'boom', errorType: 'Error', permanent: false } as const;
    expect(decideAttempt(charged, 2, { ...NO_RETRIES, attemptBase: 1 }, 0).state).to.equal('DEAD');
    const oneRetry = { ...NO_RETRIES, maxRetries: 1, attemptBase: 1 };
    expect(decideAttempt(charged, 2, oneRetry, 0).state).to.equal('RETRYING');
    expect(attemptCompletion('t', 2, charged, oneRetry, 0, 1)).to.not.have.property('freeRetry');
  });
});
