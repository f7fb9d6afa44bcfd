/**
 * fencePartition — inputs: partition, epoch. One `updateMany` over the partition's unfinished
 * tasks (SCHEDULED, PENDING, RETRYING, BLOCKED, RUNNING) whose owner_epoch (absent = 0) is lower:
 * owner_epoch = epoch. Index `tasks_partition_state_due` (partition, state). Output: how many
 * changed. Guarantee: each document changes atomically; once it returns, markPending/claimTasks
 * with an older epoch change none of these tasks (the argument: docs/MONGODB.md, "Fencing").
 */
import type { MongoCollections } from '../collections';
import { GUARDS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function fencePartition(c: MongoCollections, partition: number, epoch: number): Promise<number> {
  const res = await c.tasks.updateMany(
    { partition, state: inStates(GUARDS.fence), owner_epoch: { $not: { $gte: epoch } } },
    { $set: { owner_epoch: epoch } },
  );
  return res.modifiedCount;
}
