/**
 * A handler's end as the completion the pull worker reports: a JSON result, or an error with its
 * message, type and whether retrying can help.
 */
import { nonFiniteNumber, nonFiniteNumberMessage } from '../json-numbers';
import type { CompletionError } from './worker-api';

/** The most characters of an error message the completion endpoint takes. */
export const MAX_ERROR_MESSAGE = 10_000;

/** The most characters of an error type the completion endpoint takes. */
const MAX_ERROR_TYPE = 200;

/** The most characters of a stack the completion endpoint takes (it keeps the first 4,096). */
const MAX_STACK = 65_536;

/** What an attempt reports: success with a JSON result, or a failure. */
export type Outcome = { kind: 'succeeded'; result: unknown } | { kind: 'failed'; error: CompletionError };

/**
 * A handler's return value as a success; a value JSON cannot carry (a BigInt, a cycle, a throwing
 * `toJSON`, NaN or ±Infinity, which JSON would write as null) as a permanent
 * `result_not_serializable` failure (retrying would fail the same way).
 * `undefined` is stored as no result (null). The value is sent as its JSON text reads back.
 */
export function succeeded(result: unknown): Outcome {
  const odd = nonFiniteNumber(result);
  if (odd)
    return failure(`handler result is not JSON-serialisable: ${nonFiniteNumberMessage('result', odd)}`, 'result_not_serializable', true);
  try {
    const text = JSON.stringify(result);
    return { kind: 'succeeded', result: text === undefined ? null : (JSON.parse(text) as unknown) };
  } catch (err) {
    return failure(`handler result is not JSON-serialisable: ${(err as Error)?.message ?? String(err)}`, 'result_not_serializable', true);
  }
}

/**
 * A handler's throw as a failure: its `message`, its `name` as the type, its `code` and `stack`
 * (as the scheduler's own workers keep them), and `permanent` when it is a `PermanentError` (by
 * name) or carries `permanent: true` (the rule of the scheduler's own workers).
 */
export function failed(err: unknown): Outcome {
  if (err instanceof Error || (err !== null && typeof err === 'object' && 'message' in err)) {
    const e = err as { name?: unknown; message?: unknown; permanent?: unknown; code?: unknown; stack?: unknown };
    const type = typeof e.name === 'string' && e.name ? e.name : 'Error';
    const message = typeof e.message === 'string' && e.message ? e.message : type;
    const outcome = failure(message, type, e.name === 'PermanentError' || e.permanent === true);
    const error = (outcome as { error: CompletionError }).error;
    const code = typeof e.code === 'string' || typeof e.code === 'number' ? String(e.code) : '';
    // A code the endpoint refuses (NUL, a surrogate, over 200 characters) is left out, not the report.
    if (code && code.length <= MAX_ERROR_TYPE && !code.includes('\u0000') && !/[\uD800-\uDFFF]/.test(code)) error.code = code;
    if (typeof e.stack === 'string' && e.stack) error.stack = e.stack.slice(0, MAX_STACK);
    return outcome;
  }
  return failure(`handler threw a non-Error value: ${describe(err)}`, 'Error', false);
}

/** A failure with the endpoint's bounds applied to `message` and `type`. */
export function failure(message: string, type: string, permanent: boolean): Outcome {
  return {
    kind: 'failed',
    error: { message: message.slice(0, MAX_ERROR_MESSAGE), type: type.slice(0, MAX_ERROR_TYPE), permanent },
  };
}

function describe(value: unknown): string {
  try {
    return String(value).slice(0, 200);
  } catch {
    return typeof value;
  }
}
