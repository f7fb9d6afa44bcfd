import type { DueEntry } from '../domain/task';
import type { ActorDirectory } from './deps';

/** `value(e)` of each entry, grouped by the entry's partition (one message per owner). */
export function byPartition<T>(entries: readonly DueEntry[], value: (e: DueEntry) => T): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const e of entries) {
    const list = groups.get(e.partition);
    if (list) list.push(value(e));
    else groups.set(e.partition, [value(e)]);
  }
  return groups;
}

/**
 * Hands waiting tasks to the owners of their partitions, one `offer` message per partition: new
 * submissions (the service's gateway) and workflow tasks released by a completion (the dispatcher).
 * An owner keeps the entries due inside its window; a later window read finds the others. In
 * cluster mode the other nodes are told too (their owner of a partition wakes).
 */
export function offerToOwners(directory: ActorDirectory, entries: readonly DueEntry[]): void {
  for (const [p, list] of byPartition(entries, (e) => e)) directory.owners[p]?.tell('offer', list);
  if (entries.length > 0) directory.peers?.offered(entries);
}

/**
 * Aborts a RUNNING attempt (a cancel): the local dispatcher ignores an attempt it does not run;
 * in cluster mode the other nodes are told too.
 */
export function abortRunning(directory: ActorDirectory, taskId: string, attempt: number): void {
  directory.dispatcher?.tell('abort', { taskId, attempt });
  directory.peers?.abort(taskId, attempt);
}
