/**
 * Every task reachable from `start` along `dependents` edges (`DagPlan.dependents` of a validated
 * workflow): the tasks to cancel with reason `upstream_failed` when the starts failed.
 *
 * Iterative breadth-first search, O(reached tasks + their edges). Each id appears once, in BFS
 * order; the starts themselves are never included, even when one start is downstream of another.
 * Ids missing from `dependents` count as having no dependents. `dependents` may also be a
 * function (e.g. a prepared read of a store's edges), asked once per reached task.
 */
export function descendantsOf(
  start: readonly string[],
  dependents: ReadonlyMap<string, readonly string[]> | ((id: string) => readonly string[]),
): string[] {
  const seen = new Set<string>(start);
  const out: string[] = [];
  const of = typeof dependents === 'function' ? dependents : (id: string) => dependents.get(id) ?? [];
  for (let frontier = [...seen]; frontier.length > 0; out.push(...frontier)) {
    frontier = nextLevel(frontier, of, seen);
  }
  return out;
}

/**
 * As {@link descendantsOf}, for edges read from storage one breadth-first level at a time:
 * `dependentsOf(frontier)` answers the dependents of the ids of one level (in one batch of reads);
 * an id it leaves out has none. Same order and guarantees.
 */
export async function descendantsByLevel(
  start: readonly string[],
  dependentsOf: (frontier: readonly string[]) => Promise<ReadonlyMap<string, readonly string[]>>,
): Promise<string[]> {
  const seen = new Set<string>(start);
  const out: string[] = [];
  for (let frontier = [...seen]; frontier.length > 0; out.push(...frontier)) {
    const level = await dependentsOf(frontier);
    frontier = nextLevel(frontier, (id) => level.get(id) ?? [], seen);
  }
  return out;
}

/** The next level: the dependents of `frontier` not seen yet, in order; marks them seen. */
function nextLevel(frontier: readonly string[], dependentsOf: (id: string) => readonly string[], seen: Set<string>): string[] {
  const next: string[] = [];
  for (const id of frontier) {
    for (const d of dependentsOf(id)) {
      if (seen.has(d)) continue;
      seen.add(d);
      next.push(d);
    }
  }
  return next;
}
