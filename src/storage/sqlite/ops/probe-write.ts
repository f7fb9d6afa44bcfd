/**
 * probeWrite — inputs: now (epoch ms). Stores `now` under the `write_probe` key of `meta`.
 * Output: none. Guarantee: a real write through the group commit (its page reaches the WAL and is
 * fsynced), so its success says the store takes writes again after a fault (a freed disk, a
 * volume remounted read-write); it changes nothing any other operation reads.
 */
import type Database from 'better-sqlite3';

export function prepareProbeWrite(db: Database.Database): (now: number) => void {
  const stmt = db.prepare(`INSERT INTO meta (key, value) VALUES ('write_probe', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`);
  return (now) => {
    stmt.run(String(now));
  };
}
