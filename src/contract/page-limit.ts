import { ValidationError } from '../domain/errors';

/**
 * Page size of a list query: default 50, 1..1000.
 * @throws ValidationError (field `limit`)
 */
export function pageLimit(raw: string | number | undefined): number {
  const limit = raw === undefined ? 50 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ValidationError('limit', 'must be between 1 and 1000');
  return limit;
}
