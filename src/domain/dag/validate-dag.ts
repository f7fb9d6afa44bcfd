import { ValidationError } from '../errors';

/** One task of a submitted workflow, as far as the graph is concerned. */
export interface DagTask {
  readonly id: string;
  /** Ids of tasks in the same workflow that must succeed first. Repeats are ignored. */
  readonly dependencies?: readonly string[];
}

/** What the workflow feature needs to store and run a validated workflow (docs/DESIGN.md §8). */
export interface DagPlan {
  /** Every task id in a topological order: each id comes after all of its dependencies. */
  order: string[];
  /** Ids of the tasks without dependencies (they start at once), in input order. */
  roots: string[];
  /** Id → ids of the tasks that depend on it directly, each once, in input order; `[]` for leaves. */
  dependents: Map<string, string[]>;
  /** Id → number of DISTINCT dependencies: the BLOCKED task's initial unmet count (0 for roots). */
  unmetCount: Map<string, number>;
  /** Id → length of the longest dependency path from a root (roots 0). */
  depth: Map<string, number>;
}

/** How many cycle ids the error message spells out; `details.cycle` always has them all. */
const MESSAGE_CYCLE_IDS = 10;

/**
 * Validates a workflow's dependency graph and plans it (docs/DESIGN.md §8). Pure: no I/O.
 *
 * Checks, in this order, each throwing {@link ValidationError} (400) whose `details` name the culprits:
 * 1. no tasks: field `tasks`, `details.min` = 1;
 * 2. more than `maxTasks` tasks: field `tasks`, `details.max`, `details.count`;
 * 3. an id used twice: field `tasks`, `details.duplicate_ids` (each repeated id once);
 * 4. a dependency on an id not in the workflow: field `tasks[i].dependencies`, `details.task_id`,
 *    `details.unknown_dependencies` (the first such task in input order);
 * 5. a task depending on itself: field `tasks`, `details.task_ids` (every such task);
 * 6. a cycle: field `tasks`, `details.cycle`: the ids of ONE cycle in execution order, i.e. each id
 *    is a dependency of the next and the last is a dependency of the first, starting from the id
 *    that comes first in the input. Tasks merely downstream of a cycle are not listed.
 *
 * A dependency listed twice by the same task is DE-DUPLICATED, not rejected: it means the same thing,
 * and `unmetCount` counts distinct dependencies so the count reaches 0 exactly when all succeeded.
 *
 * Everything is iterative (Kahn's algorithm for the order, then a walk along unprocessed
 * dependencies to extract a cycle), O(tasks + dependencies) time and memory, so a 10,000-task chain
 * or a 5,000-way fan-in cannot overflow the stack.
 *
 * @param maxTasks the configured workflow size limit (a positive integer)
 * @throws RangeError when `maxTasks` is not a positive integer (a configuration bug, not the caller's)
 */
export function validateDag(tasks: ReadonlyArray<DagTask>, maxTasks: number): DagPlan {
  if (!Number.isInteger(maxTasks) || maxTasks < 1) throw new RangeError(`maxTasks must be a positive integer, got ${maxTasks}`);
  const n = tasks.length;
  if (n === 0) throw new ValidationError('tasks', 'a workflow needs at least one task', { min: 1 });
  if (n > maxTasks) {
    throw new ValidationError('tasks', `a workflow may have at most ${maxTasks} tasks; this one has ${n}`, { max: maxTasks, count: n });
  }

  // Ids → input index; ids used more than once.
  const indexOf = new Map<string, number>();
  const duplicates = new Set<string>();
  for (let i = 0; i < n; i++) {
    const id = tasks[i].id;
    if (indexOf.has(id)) duplicates.add(id);
    else indexOf.set(id, i);
  }
  if (duplicates.size > 0) {
    const ids = [...duplicates];
    throw new ValidationError('tasks', `task ids must be unique within a workflow; repeated: ${ids.join(', ')}`, { duplicate_ids: ids });
  }

  // Distinct dependencies as indices; unknown and self dependencies.
  const deps: number[][] = new Array<number[]>(n);
  const selfDependent: string[] = [];
  for (let i = 0; i < n; i++) {
    const listed = tasks[i].dependencies ?? [];
    const seen = new Set<number>();
    const unknown = new Set<string>();
    let self = false;
    for (const dep of listed) {
      const j = indexOf.get(dep);
      if (j === undefined) unknown.add(dep);
      else if (j === i) self = true;
      else seen.add(j);
    }
    if (unknown.size > 0) {
      const names = [...unknown];
      throw new ValidationError(
        `tasks[${i}].dependencies`,
        `task "${tasks[i].id}" depends on ids that are not in the workflow: ${names.join(', ')}`,
        { task_id: tasks[i].id, unknown_dependencies: names },
      );
    }
    if (self) selfDependent.push(tasks[i].id);
    deps[i] = [...seen];
  }
  if (selfDependent.length > 0) {
    throw new ValidationError('tasks', `a task cannot depend on itself: ${selfDependent.join(', ')}`, { task_ids: selfDependent });
  }

  // Reverse edges, in input order of the dependent.
  const dependentsIdx: number[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < n; i++) for (const j of deps[i]) dependentsIdx[j].push(i);

  // Kahn's algorithm with an array queue (head pointer, no shift()).
  const remaining = new Int32Array(n);
  const depthIdx = new Int32Array(n);
  const queue = new Int32Array(n);
  let tail = 0;
  for (let i = 0; i < n; i++) {
    remaining[i] = deps[i].length;
    if (remaining[i] === 0) queue[tail++] = i;
  }
  const rootCount = tail;
  for (let head = 0; head < tail; head++) {
    const u = queue[head];
    const next = depthIdx[u] + 1;
    for (const v of dependentsIdx[u]) {
      if (depthIdx[v] < next) depthIdx[v] = next;
      if (--remaining[v] === 0) queue[tail++] = v;
    }
  }
  if (tail < n) {
    const cycle = extractCycle(deps, remaining).map((i) => tasks[i].id);
    const shown =
      cycle.length <= MESSAGE_CYCLE_IDS
        ? [...cycle, cycle[0]].join(' → ')
        : `${cycle.slice(0, MESSAGE_CYCLE_IDS).join(' → ')} → … (${cycle.length} tasks)`;
    throw new ValidationError('tasks', `the dependencies form a cycle: ${shown}`, { cycle });
  }

  const order: string[] = new Array<string>(n);
  for (let k = 0; k < n; k++) order[k] = tasks[queue[k]].id;
  const dependents = new Map<string, string[]>();
  const unmetCount = new Map<string, number>();
  const depth = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const id = tasks[i].id;
    dependents.set(
      id,
      dependentsIdx[i].map((j) => tasks[j].id),
    );
    unmetCount.set(id, deps[i].length);
    depth.set(id, depthIdx[i]);
  }
  return { order, roots: order.slice(0, rootCount), dependents, unmetCount, depth };
}

/**
 * After Kahn's algorithm stalled: every task with `remaining > 0` has at least one dependency that
 * also has `remaining > 0`. Following such dependencies from any of them must revisit a task, and
 * the stretch from its first visit is a cycle. Iterative; each task is visited at most once.
 * Returns input indices in execution order (each a dependency of the next), rotated to start at
 * the lowest index.
 */
function extractCycle(deps: readonly number[][], remaining: Int32Array): number[] {
  const n = deps.length;
  const position = new Int32Array(n).fill(-1);
  const path: number[] = [];
  let cur = remaining.findIndex((r) => r > 0);
  while (position[cur] === -1) {
    position[cur] = path.length;
    path.push(cur);
    const blocked = deps[cur].find((j) => remaining[j] > 0);
    // Unreachable when the invariant above holds; guards against a silent infinite loop.
    if (blocked === undefined) throw new Error('validateDag: stalled task without a stalled dependency');
    cur = blocked;
  }
  // path[k] depends on path[k + 1]; reverse for execution order, then rotate to the lowest index.
  const cycle = path.slice(position[cur]).reverse();
  let start = 0;
  for (let k = 1; k < cycle.length; k++) if (cycle[k] < cycle[start]) start = k;
  return [...cycle.slice(start), ...cycle.slice(0, start)];
}
