/**
 * removeMember — input: member id. One `deleteOne` (graceful leave). Output: whether it existed.
 * Its leases are not touched (they are released or expire on their own).
 */
import type { MongoCollections } from '../collections';

export async function removeMember(c: MongoCollections, memberId: string): Promise<boolean> {
  return (await c.members.deleteOne({ _id: memberId })).deletedCount === 1;
}
