/**
 * removeMember — inputs: member id, instance (optional). Deletes the member (graceful leave); with
 * an instance, only the row that instance holds. Output: whether a row was deleted. Its leases
 * are not touched (they are released or expire on their own).
 */
import type Database from 'better-sqlite3';

export function prepareRemoveMember(db: Database.Database): (memberId: string, instance?: string) => boolean {
  const any = db.prepare(`DELETE FROM members WHERE member_id = ?`);
  const own = db.prepare(`DELETE FROM members WHERE member_id = ? AND instance = ?`);
  return (memberId, instance) => (instance === undefined ? any.run(memberId) : own.run(memberId, instance)).changes === 1;
}
