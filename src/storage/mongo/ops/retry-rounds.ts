/**
 * Bound on the read-then-compare-and-set rounds of one operation (cancel-task.ts,
 * update-waiting-task.ts): each lost round means the task changed state in between, which a task
 * does a handful of times in its life, so hitting the bound means something is wrong.
 */
export const MAX_ROUNDS = 10;
