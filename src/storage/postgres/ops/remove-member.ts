/**
 * removeMember — inputs: member id, instance (optional). Deletes the member (graceful leave); with
 * an instance, only the row that instance holds. Output: whether a row was deleted.
 * Guarantee: one DELETE in a transaction of its own; with an instance, a process fenced out by
 * another holding the same id never deletes the other's row. Its leases are not touched (they
 * are released or expire on their own).
 */
import type { Db } from '../db';

export async function removeMember(db: Db, memberId: string, instance?: string): Promise<boolean> {
  const res =
    instance === undefined
      ? await db.query(`DELETE FROM members WHERE member_id = $1`, [memberId])
      : await db.query(`DELETE FROM members WHERE member_id = $1 AND instance = $2`, [memberId, instance]);
  return res.rowCount === 1;
}
