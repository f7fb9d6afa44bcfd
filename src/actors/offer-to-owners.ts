import type { DueEntry } from '../domain/task';
import type { ActorDirectory } from './deps';

/**
 * Hands waiting tasks to the owners of their partitions, one `offer` message per partition: new
 * submissions (the service's gateway) and workflow tasks released by a completion (the dispatcher).
 * An owner keeps the entries due inside its window; a later window read finds the others.
 */
export function offerToOwners(directory: ActorDirectory, entries: readonly DueEntry[]): void {
  const byPartition = new Map<number, DueEntry[]>();
  for (const e of entries) {
    const list = byPartition.get(e.partition);
    if (list) list.push(e);
    else byPartition.set(e.partition, [e]);
  }
  for (const [p, list] of byPartition) directory.owners[p]?.tell('offer', list);
}
