import { PayloadTooLargeError, ValidationError } from '../domain/errors';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../domain/json-depth';

/**
 * The caps of a task's payload and metadata: nested at most {@link MAX_JSON_DEPTH} levels, and at
 * most `limitBytes` as UTF-8 JSON text (`maxPayloadBytes`, `maxMetadataBytes`). The depth is
 * checked first: JSON.stringify recurses.
 * @param field the request path named in the error (`payload`, `tasks[3].metadata`)
 * @returns the size in bytes (0 for undefined)
 * @throws ValidationError (400) nested too deep; PayloadTooLargeError (413) too large
 */
export function assertJsonSize(value: unknown, limitBytes: number, field: string): number {
  if (exceedsJsonDepth(value)) throw new ValidationError(field, `nests deeper than ${MAX_JSON_DEPTH} levels`);
  const bytes = value === undefined ? 0 : Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > limitBytes) throw new PayloadTooLargeError(limitBytes, field, bytes);
  return bytes;
}
