/**
 * markPending — inputs: task ids, now, optional epoch. Transition `due`: SCHEDULED/RETRYING →
 * PENDING where due_at <= now. Output: the ids (in input order) that are PENDING afterwards,
 * including ones that already were. Guarantee: one statement for the whole list, a compare-and-set
 * on state and due_at that PostgreSQL re-checks on the latest row version, so it never touches a
 * task in any other state, also when another node changes it at the same time.
 * With `epoch` (cluster mode, the caller's lease epoch): the compare-and-set also requires
 * owner_epoch <= epoch and sets owner_epoch = epoch; an id fenced by a newer owner (owner_epoch >
 * epoch) is neither changed nor returned.
 */
import type { Db } from '../db';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

const PENDING = sqlState(TRANSITIONS.due.to);

/** `fenced`: the statement with the owner_epoch condition ($3 = epoch). */
const markSql = (fenced: boolean): string => `
  WITH w AS (SELECT DISTINCT id FROM unnest($1::text[]) AS u(id)),
  marked AS (
    UPDATE tasks t SET state = ${PENDING}, updated_at = $2${fenced ? ', owner_epoch = $3' : ''}
    FROM (SELECT id FROM w ORDER BY id) s
    WHERE t.id = s.id AND ${sqlStates(TRANSITIONS.due.from, 't.state')} AND t.due_at <= $2${fenced ? ' AND t.owner_epoch <= $3' : ''}
    RETURNING t.id)
  SELECT id FROM marked
  UNION ALL
  SELECT t.id FROM tasks t JOIN w ON t.id = w.id WHERE t.state = ${PENDING}${fenced ? ' AND t.owner_epoch <= $3' : ''}`;

const MARK = markSql(false);
const MARK_FENCED = markSql(true);

/** Marks the due ones of `ids` PENDING (see the file header). */
export async function markPending(db: Db, ids: string[], now: number, epoch?: number): Promise<string[]> {
  if (ids.length === 0) return [];
  const { rows } =
    epoch === undefined ? await db.query<{ id: string }>(MARK, [ids, now]) : await db.query<{ id: string }>(MARK_FENCED, [ids, now, epoch]);
  const pending = new Set(rows.map((r) => r.id));
  return ids.filter((id) => pending.has(id));
}
