import { ValidationError } from '../domain/errors';
import type { ServiceQuery } from './types';

/** The one wording of a bad `limit`, whether the schema or {@link pageLimit} finds it. */
export const LIMIT_REASON = 'must be a whole number from 1 to 1000';

/**
 * Page size of a list query: default 50, 1..1000.
 * @throws ValidationError (field `limit`)
 */
export function pageLimit(raw: string | number | undefined): number {
  const limit = raw === undefined ? 50 : Number(raw);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw new ValidationError('limit', LIMIT_REASON);
  return limit;
}

/**
 * A list query with `limit` as a string, as REST gives it (the actor-message API may give a number;
 * absent or null: no parameter). Typed as the query `Q` its schema describes: the caller validates it
 * with that schema before it reads a value.
 */
export function limitAsString<Q extends { limit?: string }>(query: ServiceQuery<Q> | null | undefined): Q {
  const q = (query ?? {}) as ServiceQuery<Q> & { limit?: unknown };
  return { ...q, ...(q.limit !== undefined ? { limit: String(q.limit) } : {}) } as Q;
}
