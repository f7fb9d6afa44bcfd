import type { FastifyRequest } from 'fastify';
import { DuplicateHeaderError } from './http-errors';

/**
 * Headers a request may carry once: which copy counts is ambiguous. Node keeps only the first in
 * `req.headers`, while a proxy in front may have checked another: an `Authorization` it let
 * through, or a `Content-Type` (the body would be parsed as JSON or refused 415 by header order).
 */
const SINGLETON_HEADERS = ['authorization', 'content-type'] as const;

/**
 * fastify `onRequest` hook, on every path (keys or not): a request with more than one copy of a
 * {@link SINGLETON_HEADERS} header is refused (400 `DUPLICATE_HEADER` naming it, with the count).
 * @throws DuplicateHeaderError
 */
export async function refuseDuplicateHeaders(req: FastifyRequest): Promise<void> {
  const raw = req.raw.rawHeaders;
  for (const name of SINGLETON_HEADERS) {
    const copies = headerCount(raw, name);
    if (copies > 1) throw new DuplicateHeaderError(name, copies);
  }
}

/** How many `name` header lines a request has (`rawHeaders`: name, value, name, value…; `name` lower case). */
function headerCount(rawHeaders: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) n++;
  return n;
}
