/**
 * Every item of a paged list: calls `page(cursor)` from the first page (cursor undefined) and
 * follows `next_cursor` until it is null.
 */
export async function* pages<P extends { next_cursor: string | null }, T>(
  page: (cursor: string | undefined) => Promise<P>,
  items: (p: P) => T[],
): AsyncGenerator<T> {
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    yield* items(p);
    cursor = p.next_cursor ?? undefined;
  } while (cursor);
}
