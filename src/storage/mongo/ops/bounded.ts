/**
 * Runs `fn` over `items` with at most `limit` calls in flight, answering in input order. Used by
 * the ops that write many independent documents (claims, completions, lease extensions): a few
 * round trips in flight hide the latency; hundreds at once would only queue in the driver's
 * connection pool and on the server, and hold the store's write queue as long.
 */
export const WRITE_PARALLELISM = 8;

export async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return out;
}
