/**
 * 010: the waiting-tasks index split in two. `tasks_waiting_due` held SCHEDULED, PENDING and
 * RETRYING tasks in (partition, due_at, seq) order, so on a store of millions of SCHEDULED tasks
 * each partition's run-now entries sat on their own leaf page ahead of that partition's range:
 * with 64 partitions a commit of a few hundred claims or completions dirtied about 64 leaf pages
 * of that index alone, which made the writer's commits three times dearer (measured with 10
 * million SCHEDULED tasks: 27.6 against 8.9 µs of commit per task). Now the tasks about to run
 * (PENDING, RETRYING) have their own small index, whose pages stay few and hot whatever is
 * scheduled for later. With 10 million SCHEDULED tasks: commits 11.0 µs per task. Building
 * `tasks_scheduled_due` on such a store takes about 15 s, once, at the first start after the
 * upgrade.
 */
export const up = `
DROP INDEX tasks_waiting_due;
CREATE INDEX tasks_scheduled_due ON tasks (partition, due_at, seq) WHERE state = 'SCHEDULED';
CREATE INDEX tasks_ready_due ON tasks (partition, due_at, seq) WHERE state IN ('PENDING', 'RETRYING');
`;
