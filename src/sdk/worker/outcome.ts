/**
 * A handler's end as the completion the pull worker reports: a JSON result, or an error with its
 * message, type and whether retrying can help.
 */
import { jsonProblem, nonFiniteNumberMessage } from '../json-numbers';
import type { CompletionError } from './worker-api';

/** The most characters of an error message the completion endpoint takes. */
export const MAX_ERROR_MESSAGE = 10_000;

/** The most characters of an error type the completion endpoint takes. */
const MAX_ERROR_TYPE = 200;

/** The most characters of a stack the completion endpoint takes (it keeps the first 4,096). */
const MAX_STACK = 65_536;

/** Deepest nesting of a result the completion endpoint takes (objects and arrays), as for payloads. */
const MAX_RESULT_DEPTH = 64;

/** What an attempt reports: success with a JSON result, or a failure. */
export type Outcome = { kind: 'succeeded'; result: unknown } | { kind: 'failed'; error: CompletionError };

/**
 * A handler's return value as a success; a value JSON cannot carry (a BigInt, a cycle, a throwing
 * `toJSON`, NaN or ±Infinity, which JSON would write as null) as a permanent
 * `result_not_serializable` failure, and one nested deeper than 64 levels (which the endpoint
 * refuses) as a permanent `result_rejected` one (retrying would fail the same way).
 * `undefined` is stored as no result (null). The value is sent as its JSON text reads back.
 */
export function succeeded(result: unknown): Outcome {
  // A deeper result the completion endpoint refuses (a 400, `result_rejected` in attempt.ts); past
  // the client's body bound it could not even be sent. Either way: the same permanent failure.
  let odd: ReturnType<typeof jsonProblem>;
  try {
    odd = jsonProblem(result, MAX_RESULT_DEPTH);
  } catch (err) {
    // A getter or a Proxy trap of the result threw while it was walked: JSON could not write it either.
    return failure(`handler result is not JSON-serialisable: ${errorText(err)}`, 'result_not_serializable', true);
  }
  if (odd?.kind === 'number')
    return failure(`handler result is not JSON-serialisable: ${nonFiniteNumberMessage('result', odd)}`, 'result_not_serializable', true);
  if (odd?.kind === 'date')
    return failure(
      `handler result is not JSON-serialisable: result${odd.path}: an invalid Date, which JSON would write as null`,
      'result_not_serializable',
      true,
    );
  if (odd) return failure(`the scheduler refused the result: it nests deeper than ${MAX_RESULT_DEPTH} levels`, 'result_rejected', true);
  try {
    const text = JSON.stringify(result);
    return { kind: 'succeeded', result: text === undefined ? null : (JSON.parse(text) as unknown) };
  } catch (err) {
    return failure(`handler result is not JSON-serialisable: ${errorText(err)}`, 'result_not_serializable', true);
  }
}

/** What a throw says, never throwing itself (its own `message` getter may throw). */
function errorText(err: unknown): string {
  try {
    return (err as Error)?.message ?? String(err);
  } catch {
    return 'reading it threw';
  }
}

/**
 * A handler's throw as a failure: its `message`, its `name` as the type, its `code` and `stack`
 * (as the scheduler's own workers keep them), and `permanent` when it is a `PermanentError` (by
 * name) or carries `permanent: true` (the rule of the scheduler's own workers).
 */
export function failed(err: unknown): Outcome {
  if (err instanceof Error || (err !== null && typeof err === 'object' && holds(err, 'message'))) {
    const e = err as object;
    const name = read(e, 'name');
    const rawMessage = read(e, 'message');
    const type = typeof name === 'string' && name ? name : 'Error';
    const message = typeof rawMessage === 'string' && rawMessage ? rawMessage : type;
    const outcome = failure(message, type, name === 'PermanentError' || read(e, 'permanent') === true);
    const error = (outcome as { error: CompletionError }).error;
    const rawCode = read(e, 'code');
    const code = typeof rawCode === 'string' || typeof rawCode === 'number' ? String(rawCode) : '';
    // A code the endpoint refuses (NUL, a lone surrogate, over 200 characters) is left out, not the report.
    if (code && [...code].length <= MAX_ERROR_TYPE && !code.includes('\u0000') && !LONE_SURROGATE.test(code)) error.code = code;
    const stack = read(e, 'stack');
    if (typeof stack === 'string' && stack) error.stack = stack.slice(0, MAX_STACK);
    return outcome;
  }
  return failure(`handler threw a non-Error value: ${describe(err)}`, 'Error', false);
}

/** `key in obj`, false when the check throws (a Proxy's `has` trap). */
function holds(obj: object, key: string): boolean {
  try {
    return key in obj;
  } catch {
    return false;
  }
}

/** Half of a UTF-16 surrogate pair without its other half. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * `obj[key]`, or undefined when reading it throws: a getter that throws (`stack` when
 * `Error.prepareStackTrace` throws) must not end the worker process, as an unhandled rejection would.
 */
function read(obj: object, key: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/**
 * A failure with the endpoint's bounds applied to `message` and `type`: each cut to its most
 * characters (code points, as the endpoint counts them, so a surrogate pair is never split), and
 * the type made text the endpoint takes (a NUL or a lone surrogate becomes U+FFFD; empty: `Error`),
 * so that no error name can make the report itself refused and the attempt run again.
 */
export function failure(message: string, type: string, permanent: boolean): Outcome {
  const kind = cutToCodePoints(type, MAX_ERROR_TYPE).replace(NOT_WELL_FORMED, '\uFFFD');
  return {
    kind: 'failed',
    error: { message: cutToCodePoints(message, MAX_ERROR_MESSAGE), type: kind || 'Error', permanent },
  };
}

/** NUL and lone UTF-16 surrogates, which the endpoint refuses in names such as `error.type`. */
// eslint-disable-next-line no-control-regex -- NUL is what is looked for
const NOT_WELL_FORMED = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` cut to at most `max` code points (a pair is one, as JSON Schema's `maxLength` counts). */
function cutToCodePoints(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = '';
  let n = 0;
  for (const ch of text) {
    if (n++ === max) break;
    out += ch;
  }
  return out;
}

function describe(value: unknown): string {
  try {
    return String(value).slice(0, 200);
  } catch {
    return typeof value;
  }
}
