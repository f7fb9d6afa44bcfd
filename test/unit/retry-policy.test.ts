import { expect } from 'chai';
import { AttemptOutcome, decideAttempt, retryDelayMs } from '../../src/domain/retry-policy';
import { RetrySettings } from '../../src/domain/task';

/** Settings without jitter, so delays are exact (jitter has its own tests below). */
const settings = (backoff: RetrySettings['backoff'], delaySeconds: number, maxRetries = 3): RetrySettings => ({
  backoff,
  delaySeconds,
  maxRetries,
  jitter: false,
});

const retryable: AttemptOutcome = { kind: 'failed', message: 'boom', errorType: 'Error', permanent: false };
const permanent: AttemptOutcome = { kind: 'failed', message: 'bad input', errorType: 'PermanentError', permanent: true };

describe('retry policy', () => {
  describe('retryDelayMs', () => {
    it('fixed: the same delay every retry', () => {
      const s = settings('fixed', 2);
      expect([1, 2, 3, 10].map((n) => retryDelayMs(s, n))).to.deep.equal([2000, 2000, 2000, 2000]);
    });

    it('linear: delay × n', () => {
      const s = settings('linear', 2);
      expect([1, 2, 3, 10].map((n) => retryDelayMs(s, n))).to.deep.equal([2000, 4000, 6000, 20_000]);
    });

    it('exponential: delay × 2^(n−1)', () => {
      const s = settings('exponential', 1);
      expect([1, 2, 3, 4, 5].map((n) => retryDelayMs(s, n))).to.deep.equal([1000, 2000, 4000, 8000, 16_000]);
    });

    it('supports fractional delaySeconds', () => {
      expect(retryDelayMs(settings('exponential', 0.5), 3)).to.equal(2000);
    });

    it('treats a retry number below 1 as the first retry', () => {
      expect(retryDelayMs(settings('linear', 3), 0)).to.equal(3000);
      expect(retryDelayMs(settings('exponential', 3), -5)).to.equal(3000);
    });

    it('caps at the default maxDelayMs of one hour', () => {
      expect(retryDelayMs(settings('exponential', 1), 12)).to.equal(2048 * 1000);
      expect(retryDelayMs(settings('exponential', 1), 13)).to.equal(3_600_000);
      expect(retryDelayMs(settings('linear', 600), 7)).to.equal(3_600_000);
      expect(retryDelayMs(settings('fixed', 7200), 1)).to.equal(3_600_000);
    });

    it('caps at an explicit maxDelaySeconds', () => {
      const s = { ...settings('exponential', 1), maxDelaySeconds: 5 };
      expect(retryDelayMs(s, 3)).to.equal(4000);
      expect(retryDelayMs(s, 4)).to.equal(5000);
      expect(retryDelayMs(s, 50)).to.equal(5000);
    });

    it('exponential with a 60 s base: 60, 120, 240 s; the cap holds', () => {
      const s = { ...settings('exponential', 60), maxDelaySeconds: 200 };
      expect([1, 2, 3, 4].map((n) => retryDelayMs(s, n))).to.deep.equal([60_000, 120_000, 200_000, 200_000]);
    });

    it('full jitter (default for exponential): a uniform draw in [0, capped delay)', () => {
      const s: RetrySettings = { backoff: 'exponential', delaySeconds: 60, maxRetries: 5 };
      expect(retryDelayMs(s, 1, () => 0)).to.equal(0);
      expect(retryDelayMs(s, 2, () => 0.5)).to.equal(60_000);
      expect(retryDelayMs(s, 3, () => 0.999999)).to.equal(239_999);
      expect(retryDelayMs({ ...s, maxDelaySeconds: 100 }, 3, () => 0.999999)).to.equal(99_999);
      for (let n = 1; n <= 3; n++) {
        const d = retryDelayMs(s, n);
        expect(d)
          .to.be.at.least(0)
          .and.below(60_000 * 2 ** (n - 1));
      }
    });

    it('jitter is off by default for fixed and linear, and can be switched either way', () => {
      expect(retryDelayMs({ backoff: 'fixed', delaySeconds: 5, maxRetries: 1 }, 1, () => 0)).to.equal(5000);
      expect(retryDelayMs({ backoff: 'linear', delaySeconds: 5, maxRetries: 1, jitter: true }, 2, () => 0.5)).to.equal(5000);
      expect(retryDelayMs({ backoff: 'exponential', delaySeconds: 5, maxRetries: 1, jitter: false }, 2, () => 0)).to.equal(10_000);
    });

    it('stays finite and capped for huge retry numbers', () => {
      expect(retryDelayMs(settings('exponential', 1), 1_000_000)).to.equal(3_600_000);
    });

    it('zero delay gives zero for every backoff', () => {
      for (const b of ['fixed', 'linear', 'exponential'] as const) {
        expect(retryDelayMs(settings(b, 0), 5), b).to.equal(0);
      }
    });
  });

  describe('decideAttempt', () => {
    const now = Date.UTC(2026, 0, 1);

    it('a replayed budget (attemptBase) counts retries from the replay, with delays restarting', () => {
      const s = { ...settings('exponential', 1, 2), attemptBase: 3 };
      expect(decideAttempt(retryable, 4, s, now)).to.deep.equal({ state: 'RETRYING', retryAt: now + 1000 });
      expect(decideAttempt(retryable, 5, s, now)).to.deep.equal({ state: 'RETRYING', retryAt: now + 2000 });
      expect(decideAttempt(retryable, 6, s, now).state).to.equal('DEAD');
    });

    it('success → SUCCEEDED with no retryAt', () => {
      expect(decideAttempt({ kind: 'succeeded', result: 42 }, 1, settings('fixed', 1), now)).to.deep.equal({
        state: 'SUCCEEDED',
        retryAt: null,
      });
    });

    it('success on the last allowed attempt is still SUCCEEDED', () => {
      expect(decideAttempt({ kind: 'succeeded', result: null }, 3, settings('fixed', 1, 2), now).state).to.equal('SUCCEEDED');
    });

    it('permanent error → FAILED, even with attempts left', () => {
      expect(decideAttempt(permanent, 1, settings('fixed', 1, 5), now)).to.deep.equal({
        state: 'FAILED',
        retryAt: null,
      });
    });

    it('retryable error with attempts left → RETRYING at now + delay', () => {
      const s = settings('exponential', 2, 5);
      expect(decideAttempt(retryable, 1, s, now)).to.deep.equal({ state: 'RETRYING', retryAt: now + 2000 });
      expect(decideAttempt(retryable, 2, s, now)).to.deep.equal({ state: 'RETRYING', retryAt: now + 4000 });
      expect(decideAttempt(retryable, 3, s, now)).to.deep.equal({ state: 'RETRYING', retryAt: now + 8000 });
    });

    it('retryAt uses the retry number = the attempt that just ended (linear)', () => {
      const s = settings('linear', 10, 5);
      expect(decideAttempt(retryable, 4, s, now).retryAt).to.equal(now + 40_000);
    });

    it('maxRetries 2: attempts 1 and 2 retry, attempt 3 is DEAD', () => {
      const s = settings('fixed', 1, 2);
      expect(decideAttempt(retryable, 1, s, now).state).to.equal('RETRYING');
      expect(decideAttempt(retryable, 2, s, now).state).to.equal('RETRYING');
      expect(decideAttempt(retryable, 3, s, now)).to.deep.equal({ state: 'DEAD', retryAt: null });
    });

    it('maxRetries 0: the first retryable failure is DEAD', () => {
      expect(decideAttempt(retryable, 1, settings('fixed', 1, 0), now)).to.deep.equal({
        state: 'DEAD',
        retryAt: null,
      });
    });

    it('permanent error on the last attempt is FAILED, not DEAD', () => {
      expect(decideAttempt(permanent, 3, settings('fixed', 1, 2), now).state).to.equal('FAILED');
    });

    it('cancelled → CANCELLED with no retryAt, whatever the attempts left', () => {
      expect(decideAttempt({ kind: 'cancelled' }, 1, settings('fixed', 1, 5), now)).to.deep.equal({
        state: 'CANCELLED',
        retryAt: null,
      });
      expect(decideAttempt({ kind: 'cancelled' }, 9, settings('fixed', 1, 2), now).state).to.equal('CANCELLED');
    });
  });
});
