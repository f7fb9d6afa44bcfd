/**
 * removeMember — inputs: member id, instance (optional). One `deleteOne` (graceful leave); with an
 * instance, only the document that instance holds. Output: whether it existed. Its leases are not
 * touched (they are released or expire on their own).
 */
import type { MongoCollections } from '../collections';

export async function removeMember(c: MongoCollections, memberId: string, instance?: string): Promise<boolean> {
  const filter = instance === undefined ? { _id: memberId } : { _id: memberId, instance };
  return (await c.members.deleteOne(filter)).deletedCount === 1;
}
