import { ValidationError } from '../domain/errors';

/** Opaque pagination cursor of a sequence number (base64url of `s:<seq>`). */
export function encodeCursor(seq: number): string {
  return Buffer.from(`s:${seq}`).toString('base64url');
}

/**
 * Sequence number of a cursor made by {@link encodeCursor}.
 * @throws ValidationError (field `cursor`) for anything else
 */
export function decodeCursor(cursor: string): number {
  const m = /^s:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) throw new ValidationError('cursor', 'is not a cursor returned by this API');
  return Number(m[1]);
}
