/**
 * 011: the waiting-task indexes ordered by due time first: (due_at, seq, partition) instead of
 * (partition, due_at, seq). Tasks due at one instant (a backlog, a midnight herd, run-now tasks
 * submitted in the same millisecond) are spread over every partition by `fnv1a(id) mod P`, so in
 * partition order their entries sat on P different leaf pages, and a commit that claimed or
 * completed a few hundred of them rewrote about P (64) pages of the index. In due order they sit
 * on a few neighbouring pages. Measured on a backlog of 20,000 SCHEDULED tasks due at one instant
 * (`bench-peers`, default settings): the drain wrote 12.4 instead of 21.6 MB of WAL, and 5 warm
 * runs of each index, taking turns, drained at a median of 43,668 against 39,448 tasks/s (end to
 * end 34,440 against 31,347). The cost moves to the window reads: a partition's read
 * (ops/load-due.ts) now steps over the other partitions' entries in its due range, which the
 * partition column at the end of the key lets it do without reading their rows (all 64 partitions
 * reading a herd of 100,000 due at one instant: 0.48–0.54 s against 0.20–0.22 s).
 * Rebuilding both on a store of 10 million SCHEDULED tasks took 5.3 s, once, at the first start
 * after the upgrade (before the service is ready).
 */
export const up = `
DROP INDEX tasks_scheduled_due;
DROP INDEX tasks_ready_due;
CREATE INDEX tasks_scheduled_due ON tasks (due_at, seq, partition) WHERE state = 'SCHEDULED';
CREATE INDEX tasks_ready_due ON tasks (due_at, seq, partition) WHERE state IN ('PENDING', 'RETRYING');
`;
