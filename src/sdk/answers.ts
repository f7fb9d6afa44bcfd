/**
 * How the transport reads an answer's body: JSON or not, an object or not, Prometheus text or not,
 * and the SchedulerApiError for each answer in 2xx that is not what the scheduler sends.
 */
import type http from 'node:http';
import { SchedulerApiError } from './errors';

/** An answer as read off the wire, before its body is parsed. */
export interface RawResponse {
  status: number;
  statusText: string;
  text: string;
  headers: http.IncomingHttpHeaders;
}

/** What {@link answerOf} gives for a body that is not JSON. */
export const NOT_JSON: unique symbol = Symbol('not JSON');

/** A 2xx answer's body: null when empty, its JSON value, or {@link NOT_JSON}. */
export function answerOf(text: string): unknown {
  if (!text) return null;
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/**
 * A 2xx answer that is JSON but not an object or an array (`null`, a number, a string: every
 * answer of the scheduler is an object): code `UNEXPECTED_ANSWER`, with its first 200 characters.
 */
export function notAnObjectError(res: RawResponse, request: string): SchedulerApiError {
  return new SchedulerApiError(
    res.status,
    'UNEXPECTED_ANSWER',
    `the answer to ${request} is ${res.text.slice(0, 40)}, not an object (HTTP ${res.status}): is the URL the scheduler's?`,
    { content_type: String(res.headers['content-type'] ?? 'none'), body: res.text.slice(0, 200) },
  );
}

/** A 2xx answer whose body is not JSON: code `NOT_JSON`, with its content type and first 200 characters. */
export function notJsonError(res: RawResponse, request: string): SchedulerApiError {
  const contentType = String(res.headers['content-type'] ?? 'none');
  return new SchedulerApiError(
    res.status,
    'NOT_JSON',
    `the answer to ${request} is not JSON (HTTP ${res.status}, content-type ${contentType}): is the URL the scheduler's?`,
    { content_type: contentType, body: res.text.slice(0, 200) },
  );
}

/** True when the answer's `content-type` names one of `types` (parameters such as `charset` aside, any case). */
export function hasMediaType(res: RawResponse, types: readonly string[]): boolean {
  const mediaType = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  return types.includes(mediaType);
}

/**
 * A 2xx answer to `/metrics` that is not Prometheus text (an HTML page: the URL names another
 * server): code `NOT_METRICS`, with its content type and first 200 characters.
 */
export function notMetricsError(res: RawResponse, request: string, types: readonly string[]): SchedulerApiError {
  const contentType = String(res.headers['content-type'] ?? 'none');
  return new SchedulerApiError(
    res.status,
    'NOT_METRICS',
    `the answer to ${request} is not Prometheus text (HTTP ${res.status}, content-type ${contentType}, not ${types.join(' or ')}): is the URL the scheduler's?`,
    { content_type: contentType, body: res.text.slice(0, 200) },
  );
}

/** JSON text → value; an empty body is null, a body that is not JSON stays its text. */
export function parseBody(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}
