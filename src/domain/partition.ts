/**
 * Partition of a task: FNV-1a (32-bit) hash of its id modulo the partition count (docs/DESIGN.md §4).
 * Stable across processes and versions: the count is fixed when the store is created.
 * @param taskId any string
 * @param partitions number of partitions, ≥ 1
 */
export function partitionOf(taskId: string, partitions: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < taskId.length; i++) {
    h ^= taskId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % partitions;
}
