/**
 * removeMember — input: member id. Deletes the member (graceful leave). Output: whether a row was
 * deleted. Its leases are not touched (they are released or expire on their own).
 */
import type Database from 'better-sqlite3';

export function prepareRemoveMember(db: Database.Database): (memberId: string) => boolean {
  const stmt = db.prepare(`DELETE FROM members WHERE member_id = ?`);
  return (memberId) => stmt.run(memberId).changes === 1;
}
