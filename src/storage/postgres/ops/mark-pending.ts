/**
 * markPending — inputs: task ids, now, optional epoch. Transition `due`: SCHEDULED/RETRYING →
 * PENDING where due_at <= now. Output: the ids (in input order) that are PENDING afterwards,
 * including ones that already were. Guarantee: one statement per 128 ids (distinct, sorted: rows
 * locked in id order), a compare-and-set on state and due_at that PostgreSQL re-checks on the
 * latest row version, so it never touches a task in any other state, also when another node
 * changes it at the same time.
 * With `epoch` (cluster mode, the caller's lease epoch): the compare-and-set also requires
 * owner_epoch <= epoch and sets owner_epoch = epoch; an id fenced by a newer owner (owner_epoch >
 * epoch) is neither changed nor returned.
 * The conditions on the row are one `(…) IS TRUE` test, which no index answers: the rows are found
 * through the id index whatever the table's statistics say (see claim-tasks.ts).
 */
import type { Db } from '../db';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';

/** Most ids per statement (see claim-tasks.ts: larger lists made the planner scan the table). */
const CHUNK = 128;

const PENDING = sqlState(TRANSITIONS.due.to);

/** `fenced`: the statement with the owner_epoch condition ($3 = epoch). */
const markSql = (fenced: boolean): string => `
  WITH w AS (SELECT id FROM unnest($1::text[]) AS u(id)),
  marked AS (
    UPDATE tasks t SET state = ${PENDING}, updated_at = $2${fenced ? ', owner_epoch = $3' : ''}
    FROM w
    WHERE t.id = w.id AND (${sqlStates(TRANSITIONS.due.from, 't.state')} AND t.due_at <= $2${fenced ? ' AND t.owner_epoch <= $3' : ''}) IS TRUE
    RETURNING t.id)
  SELECT id FROM marked
  UNION ALL
  SELECT t.id FROM tasks t JOIN w ON t.id = w.id WHERE (t.state = ${PENDING}${fenced ? ' AND t.owner_epoch <= $3' : ''}) IS TRUE`;

const MARK = markSql(false);
const MARK_FENCED = markSql(true);

/** Marks the due ones of `ids` PENDING (see the file header). */
export async function markPending(db: Db, ids: string[], now: number, epoch?: number): Promise<string[]> {
  if (ids.length === 0) return [];
  const sorted = [...new Set(ids)].sort();
  const rows: Array<{ id: string }> = [];
  for (let from = 0; from < sorted.length; from += CHUNK) {
    const chunk = sorted.slice(from, from + CHUNK);
    const answer =
      epoch === undefined
        ? await db.query<{ id: string }>(MARK, [chunk, now])
        : await db.query<{ id: string }>(MARK_FENCED, [chunk, now, epoch]);
    rows.push(...answer.rows);
  }
  const pending = new Set(rows.map((r) => r.id));
  return ids.filter((id) => pending.has(id));
}
