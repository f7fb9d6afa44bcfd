import { PermanentError, TaskHandler } from '../types';

/**
 * Fails on purpose, for testing retry paths. Payload `{message?, permanent?, times?}`:
 * fails the first `times` attempts (default: every attempt), permanently if `permanent`;
 * after that returns `{succeeded_on_attempt}`.
 */
export const fail: TaskHandler = (payload, ctx) => {
  const p = (payload ?? {}) as { message?: unknown; permanent?: unknown; times?: unknown };
  const times = typeof p.times === 'number' ? p.times : Infinity;
  if (ctx.attempt > times) return { succeeded_on_attempt: ctx.attempt };
  const message = typeof p.message === 'string' ? p.message : 'failed on purpose';
  if (p.permanent === true) throw new PermanentError(message);
  throw new Error(message);
};
