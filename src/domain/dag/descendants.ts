/**
 * Every task reachable from `start` along `dependents` edges (`DagPlan.dependents` of a validated
 * workflow): the tasks to cancel with reason `upstream_failed` when the starts failed (docs/DESIGN.md §8,
 * failure propagation).
 *
 * Iterative breadth-first search, O(reached tasks + their edges). Each id appears once, in BFS
 * order; the starts themselves are never included, even when one start is downstream of another.
 * Ids missing from `dependents` count as having no dependents.
 */
export function descendantsOf(start: readonly string[], dependents: ReadonlyMap<string, readonly string[]>): string[] {
  const seen = new Set<string>(start);
  const out: string[] = [];
  const queue: string[] = [...seen];
  for (let head = 0; head < queue.length; head++) {
    for (const next of dependents.get(queue[head]) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      out.push(next);
      queue.push(next);
    }
  }
  return out;
}
