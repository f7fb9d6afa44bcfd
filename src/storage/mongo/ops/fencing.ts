/**
 * The fencing filter shared by markPending, claimTasks and fencePartition (cluster-store.ts): a
 * task's `owner_epoch` (absent = 0) at most `epoch`. `$not: {$gt}` also matches a document
 * without the field, which `$lte` would not.
 */
export function epochAtMost(epoch: number): { owner_epoch: { $not: { $gt: number } } } {
  return { owner_epoch: { $not: { $gt: epoch } } };
}
