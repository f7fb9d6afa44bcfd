import { DueEntry } from '../domain/task';
import { ActorDirectory } from './deps';

/** Hands waiting tasks to the owners of their partitions, one message per partition. */
export function offerToOwners(directory: ActorDirectory, entries: DueEntry[]): void {
  const byPartition = new Map<number, DueEntry[]>();
  for (const e of entries) {
    const list = byPartition.get(e.partition);
    if (list) list.push(e);
    else byPartition.set(e.partition, [e]);
  }
  for (const [p, list] of byPartition) directory.owners[p]?.tell('offer', list);
}
