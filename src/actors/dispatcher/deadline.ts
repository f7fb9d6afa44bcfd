import { Clock } from '../../domain/clock';

/** Thrown by {@link withDeadline} when the promise did not settle in time. */
export class DeadlineExceededError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'DeadlineExceededError';
  }
}

/**
 * Resolves like `promise`, or rejects with {@link DeadlineExceededError} after `ms` milliseconds
 * on `clock`. The timer is cleared as soon as the promise settles.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, clock: Clock, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(new DeadlineExceededError(what, ms)), ms);
    promise.then(
      (v) => {
        clock.clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clock.clearTimeout(timer);
        reject(e);
      },
    );
  });
}
