/**
 * W3C Trace Context `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header):
 * `version-traceid-parentid-flags`, lowercase hex. Accepted on submissions (header `traceparent`)
 * and kept with the task, so a worker's span for each attempt joins the submitter's trace.
 */
import { ValidationError } from '../domain/errors';

/** The parts of a valid `traceparent`. */
export interface TraceParent {
  version: string;
  /** 32 lowercase hex digits, not all zero. */
  traceId: string;
  /** 16 lowercase hex digits, not all zero: the caller's span. */
  parentId: string;
  /** 2 hex digits; bit 0 is `sampled`. */
  flags: string;
}

const V00 = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;
// A later version may append fields after a dash (the spec's forward-compatibility rule).
const LATER = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * Parses a `traceparent` value by the spec's rules: version 00 exactly 55 characters; version
 * `ff` invalid; a later version may carry more fields; trace id and parent id must not be all
 * zeros; uppercase hex is invalid.
 * @returns the parts, or a reason it is malformed
 */
export function parseTraceparent(value: string): TraceParent | { invalid: string } {
  const v00 = V00.exec(value);
  const m = v00 ? ['', '00', ...v00.slice(1)] : LATER.exec(value);
  if (!m) return { invalid: 'must be "00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>" in lowercase hex (W3C Trace Context)' };
  const [, version, traceId, parentId, flags] = m;
  if (version === 'ff') return { invalid: 'version ff is not allowed' };
  if (version === '00' && !v00) return { invalid: 'version 00 has exactly 4 fields (55 characters)' };
  if (/^0+$/.test(traceId)) return { invalid: 'the trace id must not be all zeros' };
  if (/^0+$/.test(parentId)) return { invalid: 'the parent id must not be all zeros' };
  return { version, traceId, parentId, flags };
}

/**
 * Checks an optional `traceparent` given with a submission.
 * @returns the value (trimmed of surrounding blanks, which HTTP allows) or null when absent
 * @throws ValidationError (400) on field `traceparent` when it is malformed
 */
export function checkTraceparent(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string') throw new ValidationError('traceparent', 'header traceparent must be given once, as a string');
  const trimmed = value.trim();
  // HTTP joins a repeated header's lines with ", " (RFC 9110 §5.3); the W3C header has one value.
  if (trimmed.includes(','))
    throw new ValidationError('traceparent', 'header traceparent must be given once, with one value', { value: trimmed.slice(0, 100) });
  const parsed = parseTraceparent(trimmed);
  if ('invalid' in parsed)
    throw new ValidationError('traceparent', `header traceparent ${parsed.invalid}`, { value: trimmed.slice(0, 100) });
  return trimmed;
}

/** The `headers` schema of a submission route (documentation; checked by {@link checkTraceparent}). */
export const traceparentHeadersSchema = {
  type: 'object',
  properties: {
    traceparent: {
      type: 'string',
      pattern: '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(-.*)?$',
      description:
        'W3C Trace Context of the caller: kept with the task(s); each attempt runs in a child span of it and its log lines carry trace_id. Malformed: 400 naming `traceparent`.',
    },
  },
} as const;
