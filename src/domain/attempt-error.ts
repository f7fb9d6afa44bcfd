/**
 * What is kept of an error a handler threw, so that "why did my task fail?" has an answer after
 * the worker process is gone: its message, its type (the error's `name`), its `code`, the chain of
 * its `cause`s and a bounded stack. Pure: reads only the value given, never throws, and bounds
 * everything it keeps (a handler may throw anything, including a value whose getters throw).
 */
import { cutText } from './text-cut';

/** Most causes kept below the error itself; a longer chain ends with `causeOmitted: 'depth'`. */
export const MAX_CAUSE_DEPTH = 5;
/** Most lines of the stack kept. */
export const MAX_STACK_LINES = 30;
/** Most characters of the stack kept (about 4 KiB of ASCII). */
export const MAX_STACK_CHARS = 4096;
/** Most characters kept of one message (the error's own and each cause's). */
export const MAX_MESSAGE_CHARS = 4096;

/** Why a cause chain stops early: too deep, or a cause that is one of the errors above it. */
export type CauseOmitted = 'depth' | 'circular';

/** One cause of an error (its `cause`, then that one's, …). */
export interface ErrorCause {
  message: string;
  /** The cause's `name` (`Error`, `TypeError`, `AggregateError`, …), or `typeof` for a thrown non-object. */
  type: string;
  /** Its `code` (`ECONNREFUSED`, `ERR_INVALID_URL`, …), when it had one. */
  code?: string;
  cause?: ErrorCause;
  /** Set when this one had a cause that was not kept, and why. */
  causeOmitted?: CauseOmitted;
}

/** What an attempt's error keeps besides its message, type and retryability (all optional). */
export interface ErrorDetail {
  /** The error's `code` (a string, or a number turned into one), when it had one. */
  code?: string;
  /** The HTTP status of the failed request (the `http` handler's errors, `status` on any error). */
  httpStatus?: number;
  /** A lost worker process: its exit code (null when it was ended by a signal). */
  exitCode?: number | null;
  /** A lost worker process: the signal that ended it (`SIGKILL`, …). */
  signal?: string | null;
  cause?: ErrorCause;
  causeOmitted?: CauseOmitted;
  /** The first {@link MAX_STACK_LINES} lines and {@link MAX_STACK_CHARS} characters of the stack. */
  stack?: string;
}

/** An error as an attempt records it: {@link describeError}'s answer. */
export interface DescribedError extends ErrorDetail {
  message: string;
  type: string;
}

/** Reads `obj[key]`, or undefined when the read throws (a getter, a proxy). */
function read(obj: object, key: string): unknown {
  try {
    return (obj as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** `text` cut to `max` characters, marked when cut. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const kept = cutText(text, max);
  return `${kept}… (${text.length - kept.length} more characters)`;
}

/** A message as an attempt keeps it: its first {@link MAX_MESSAGE_CHARS} characters, the cut marked. */
export function boundedMessage(message: string): string {
  return cut(message, MAX_MESSAGE_CHARS);
}

/** A thrown value that is not an object, or an object without a message, as text. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    const json = JSON.stringify(value);
    if (typeof json === 'string') return json;
  } catch {
    /* a cycle or a BigInt: fall back to String */
  }
  try {
    return String(value);
  } catch {
    return '[a value that cannot be read]';
  }
}

/**
 * The message of an error-like object: its `message`, or, for an empty one with `errors` (an
 * AggregateError, as Node's connect gives when every address of a host refused), theirs joined.
 */
function messageOf(err: object): string {
  const message = read(err, 'message');
  const text = typeof message === 'string' ? message : message === undefined ? '' : textOf(message);
  if (text !== '') return text;
  const errors = read(err, 'errors');
  if (Array.isArray(errors) && errors.length > 0) {
    return errors
      .slice(0, 5)
      .map((e) => (e !== null && typeof e === 'object' ? messageOf(e) : textOf(e)))
      .join('; ');
  }
  return '';
}

/** The error's `name`, else its constructor's, else `Error`. */
function typeOf(err: object): string {
  const name = read(err, 'name');
  if (typeof name === 'string' && name !== '') return cut(name, 200);
  const ctor = read(err, 'constructor');
  const ctorName = typeof ctor === 'function' ? (ctor as { name?: unknown }).name : undefined;
  return typeof ctorName === 'string' && ctorName !== '' && ctorName !== 'Object' ? cut(ctorName, 200) : 'Error';
}

/** Its `code` as text: a non-empty string, or a finite number. */
function codeOf(err: object): string | undefined {
  const code = read(err, 'code');
  if (typeof code === 'string' && code !== '') return cut(code, 200);
  if (typeof code === 'number' && Number.isFinite(code)) return String(code);
  return undefined;
}

/** An HTTP status in `status` (or `statusCode`): an integer 100..599. */
function httpStatusOf(err: object): number | undefined {
  for (const key of ['status', 'statusCode']) {
    const v = read(err, key);
    if (typeof v === 'number' && Number.isInteger(v) && v >= 100 && v <= 599) return v;
  }
  return undefined;
}

/** The first {@link MAX_STACK_LINES} lines and {@link MAX_STACK_CHARS} characters of `stack`, the cut marked. */
export function boundedStack(stack: string): string {
  const lines = stack.split('\n');
  let kept = lines.slice(0, MAX_STACK_LINES).join('\n');
  let cutMark = lines.length > MAX_STACK_LINES ? `\n    … ${lines.length - MAX_STACK_LINES} more lines` : '';
  if (kept.length > MAX_STACK_CHARS) {
    kept = cutText(kept, MAX_STACK_CHARS);
    cutMark = `\n    … (cut at ${MAX_STACK_CHARS} characters)`;
  }
  return kept + cutMark;
}

/** The value thrown as `{message, type, code?}`, without its cause or stack. */
function head(value: unknown): { message: string; type: string; code?: string } {
  if (value === null || typeof value !== 'object') {
    return { message: cut(textOf(value), MAX_MESSAGE_CHARS), type: value === null ? 'null' : typeof value };
  }
  const code = codeOf(value);
  let message = messageOf(value);
  // A thrown plain object without a message (`throw {status: 'bad'}`): its JSON text says the most.
  if (message === '' && !(value instanceof Error) && read(value, 'message') === undefined) message = textOf(value);
  return { message: cut(message, MAX_MESSAGE_CHARS), type: typeOf(value), ...(code !== undefined ? { code } : {}) };
}

/**
 * The cause chain below `err`, at most {@link MAX_CAUSE_DEPTH} deep, stopping at a cause already
 * seen (a cycle).
 * @returns the first cause, or why it was left out, or nothing when there is none
 */
function causeChain(err: object, seen: Set<object>, depth: number): { cause?: ErrorCause; causeOmitted?: CauseOmitted } {
  const cause = read(err, 'cause');
  if (cause === undefined) return {};
  if (cause !== null && typeof cause === 'object' && seen.has(cause)) return { causeOmitted: 'circular' };
  if (depth >= MAX_CAUSE_DEPTH) return { causeOmitted: 'depth' };
  const node: ErrorCause = head(cause);
  if (cause !== null && typeof cause === 'object') {
    seen.add(cause);
    Object.assign(node, causeChain(cause, seen, depth + 1));
  }
  return { cause: node };
}

/**
 * Describes what a handler threw: an `Error` (or any object with a `message`) keeps its message,
 * `name` as type, `code`, `status` (an HTTP status), the cause chain (at most
 * {@link MAX_CAUSE_DEPTH} causes; a cycle ends it, marked `causeOmitted: 'circular'`) and its
 * stack cut to {@link MAX_STACK_LINES} lines / {@link MAX_STACK_CHARS} characters. A thrown string
 * is the message with type `Error`; another non-Error value its JSON text (type `Error`, as when
 * it was wrapped in one). Never throws.
 */
export function describeError(value: unknown): DescribedError {
  try {
    return describeReadable(value);
  } catch (err) {
    // A value whose own reads throw (a Proxy whose traps throw, a getter that throws where `read`
    // cannot catch it, such as `instanceof` asking a Proxy for its prototype): what is left to say.
    let why = 'reading it threw';
    try {
      why = `reading it threw: ${err instanceof Error ? err.message : String(err)}`;
    } catch {
      // the second throw says nothing more
    }
    return { message: cut(`the thrown value could not be described (${why})`, MAX_MESSAGE_CHARS), type: 'Error' };
  }
}

/** {@link describeError} for a value whose reads do not throw (it may throw otherwise). */
function describeReadable(value: unknown): DescribedError {
  if (value === null || typeof value !== 'object') return { message: cut(textOf(value), MAX_MESSAGE_CHARS), type: 'Error' };
  const described: DescribedError = head(value);
  const status = httpStatusOf(value);
  if (status !== undefined) described.httpStatus = status;
  Object.assign(described, causeChain(value, new Set([value]), 0));
  const stack = read(value, 'stack');
  if (typeof stack === 'string' && stack !== '') described.stack = boundedStack(stack);
  return described;
}

/** The detail of a described error: everything but its message and type. */
export function errorDetail(d: DescribedError): ErrorDetail {
  const { message: _message, type: _type, ...detail } = d;
  return detail;
}
