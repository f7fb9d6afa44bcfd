import type { FastifyRequest } from 'fastify';
import { clipEcho, ValidationError } from '../domain/errors';

/**
 * fastify `onRequest` hook, on every route: a query string that cannot be percent-decoded (a `%`
 * not followed by two hex digits, bytes that are not UTF-8, such as `%FF`, an overlong `%C0%80`,
 * or a lone surrogate's UTF-8 form `%ED%A0%80`) is refused with the 400 a path that cannot be
 * decoded gets (VALIDATION_FAILED, field `url`). fastify's query parser keeps such a value as the
 * literal text sent, so `?queue=q%FF` filtered on a queue named `q%FF` (spelled `q%25FF`).
 * @throws ValidationError (field `url`)
 */
export async function refuseUndecodableQuery(req: FastifyRequest): Promise<void> {
  const url = req.raw.url ?? '';
  const query = queryOf(url);
  if (query === '' || !query.includes('%')) return;
  try {
    // '&' and '=' are not escapes, so the whole text decodes exactly when each name and value does.
    decodeURIComponent(query);
  } catch {
    throw new ValidationError('url', `'${clipEcho(url)}' is not a valid url component: its query string cannot be percent-decoded`);
  }
}

/** The query string the router parses: the text after the first `?` (or `#`, which the router also splits at). */
function queryOf(url: string): string {
  const q = url.indexOf('?');
  const h = url.indexOf('#');
  const at = q === -1 ? h : h === -1 ? q : Math.min(q, h);
  return at === -1 ? '' : url.slice(at + 1);
}
