/**
 * SQL conditions on a task's state, built from the lifecycle table (src/domain/state-machine.ts)
 * so that no SQLite operation spells a state set of its own.
 */
import { TaskState } from '../../domain/task';

/** `'PENDING'`: one state as an SQL string literal (states are fixed identifiers, never input). */
export function sqlState(state: TaskState): string {
  return `'${state}'`;
}

/**
 * `state IN ('SCHEDULED', 'RETRYING')`, or `state = 'PENDING'` for one state: the compare-and-set
 * condition for a `from` set of the table. `column` may carry a prefix such as `+state` or `t.state`.
 */
export function sqlStates(states: readonly TaskState[], column = 'state'): string {
  if (states.length === 0) throw new Error('sqlStates: empty state set');
  return states.length === 1 ? `${column} = ${sqlState(states[0])}` : `${column} IN (${states.map(sqlState).join(', ')})`;
}

/**
 * `state NOT IN ('SUCCEEDED', 'FAILED', 'DEAD', 'CANCELLED')`: a read's condition on the states a
 * task is not in. In the order given, so that it matches a partial index written the same way.
 */
export function sqlNotStates(states: readonly TaskState[], column = 'state'): string {
  if (states.length === 0) throw new Error('sqlNotStates: empty state set');
  return `${column} NOT IN (${states.map(sqlState).join(', ')})`;
}
