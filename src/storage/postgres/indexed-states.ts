/**
 * A state set as the PostgreSQL store's partial indexes of `tasks` can find it (migration 002): an
 * OR of the waiting states, written as `tasks_waiting_due`'s predicate is (when the set holds all
 * of them), and of each other state on its own (RUNNING: `tasks_running_lease`; the others:
 * `tasks_listed_state_seq`). The planner combines those index scans (a BitmapOr); written as one
 * `state IN (…)` no index holds every state of the set, and it reads the whole table.
 */
import { TaskState, WAITING_STATES } from '../../domain/task';
import { sqlStates } from '../sql/state-sql';

/**
 * `(state IN ('SCHEDULED', 'PENDING', 'RETRYING') OR state = 'BLOCKED')` for the set SCHEDULED,
 * PENDING, RETRYING, BLOCKED (see the file header); `column` may carry a prefix such as `t.state`.
 * @throws Error for an empty set
 */
export function sqlIndexedStates(states: readonly TaskState[], column = 'state'): string {
  const waiting = WAITING_STATES.every((s) => states.includes(s));
  const parts = [
    ...(waiting ? [sqlStates(WAITING_STATES, column)] : []),
    ...states.filter((s) => !(waiting && WAITING_STATES.includes(s))).map((s) => sqlStates([s], column)),
  ];
  if (parts.length === 0) throw new Error('sqlIndexedStates: empty state set');
  return `(${parts.join(' OR ')})`;
}
