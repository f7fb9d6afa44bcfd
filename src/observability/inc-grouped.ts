import type { Counter, LabelValues } from 'prom-client';

/**
 * Increments `counter` once per distinct label set among `items`, by the number of items that
 * have it, instead of once per item: prom-client validates and hashes the label set on every
 * `inc` (about 0.14–0.24 µs each, measured), and a batch of claimed, completed or submitted tasks
 * mostly shares one set. The totals are the same as one `inc` per item.
 * @param keyOf a string that tells label sets apart (equal keys: equal label sets)
 * @param labelsOf the label set of an item (called once per distinct key)
 * @throws what `counter.inc` throws for a label it does not declare (prom-client's Error)
 */
export function incGrouped<T, L extends string>(
  counter: Counter<L>,
  items: Iterable<T>,
  keyOf: (item: T) => string,
  labelsOf: (item: T) => LabelValues<L>,
): void {
  const groups = new Map<string, { item: T; n: number }>();
  for (const item of items) {
    const key = keyOf(item);
    const g = groups.get(key);
    if (g) g.n++;
    else groups.set(key, { item, n: 1 });
  }
  for (const { item, n } of groups.values()) counter.inc(labelsOf(item), n);
}
