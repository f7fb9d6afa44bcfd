/**
 * claimTasks — inputs: ids, workerId, now, leaseMs, optional fencing epochs (one per id) and seq
 * hints (ignored here: the id's unique index is as cheap as a seq lookup in PostgreSQL).
 * Transition `claim`: PENDING → RUNNING with attempts + 1, worker_id, started_at = now,
 * lease_expires_at = now + leaseMs, cancel flag cleared; a SCHEDULED or RETRYING task already due
 * (due_at <= now) is claimed the same way (transitions `due` and `claim` in one write).
 * Output: ClaimedTask for each id whose compare-and-set won, in the order of `ids` (others are
 * skipped: cancelled, already claimed, not yet due, fenced). A workflow task also gets its
 * upstream tasks' results keyed by their workflow-local ids, and every task its `traceparent` and
 * the checkpoint an earlier attempt saved (`lastCheckpoint`).
 * Guarantee: one attempt number is handed out once, between nodes too: each chunk of up to
 * {@link CHUNK} ids is one `UPDATE … FROM unnest(…) … RETURNING` whose WHERE is the
 * compare-and-set (state, due_at and, with `epochs`, owner_epoch <= the id's token; a negative
 * token never claims), which PostgreSQL re-checks on the latest row version after waiting for a
 * concurrent writer of the row. Rows are locked in id order (ids sorted here, a nested loop over
 * them in array order, chunks one after the other), so overlapping batches do not deadlock.
 * Upstream results: one more statement, only when the batch has workflow tasks. The claim is a
 * named prepared statement, parsed once, planned per call (docs/design-notes/postgres-store.md, decision 5).
 *
 * Times are bound as whole ms (epoch-ms.ts): the start time rounded down (the attempt's
 * `startedAt` is that stored value), the lease end rounded up.
 *
 * {@link claimTaskBatches} writes several claims (of different workers, times and leases) in the
 * same statements: the store gathers the claims queued in one group commit (each id carries its
 * own worker, start time and lease end), so a commit holding a dozen claims of 50 ids runs
 * 5 statements of 128 ids instead of 12 (docs/design-notes/postgres-store.md).
 *
 * A group of at most {@link CHUNK} distinct ids is one write statement ({@link claimIsOneStatement}):
 * the write queue may run it without BEGIN/COMMIT. The upstream results of claimed workflow tasks
 * are then read by a second statement after the claim committed: those upstream tasks SUCCEEDED
 * (a downstream task is claimable only then) and their results no longer change, so the read finds
 * what it would have found inside the transaction. Should that read fail, the caller gets the
 * error for a committed claim, as when a COMMIT's answer is lost: the attempts' leases run out and
 * the tasks run again.
 */
import type { Db } from '../db';
import type { ClaimedTask, RetrySettings } from '../../../domain/task';
import { parseJson, RETRY_COLUMNS, retryFromRow, TaskRow } from '../../sql/row-mapping';
import { TRANSITIONS } from '../../../domain/state-machine';
import { sqlState, sqlStates } from '../../sql/state-sql';
import { atMs, untilMs } from '../epoch-ms';

/**
 * The compare-and-set of the claim, as one `(…) IS TRUE` test: no index answers it, so the planner
 * always finds the rows through the id index (a nested loop over the sorted ids: rows locked in id
 * order). Written as plain conditions, a table without fresh statistics (a queue that just filled)
 * made it scan every waiting task through the state indexes and hash-join them (10× slower).
 */
const claimable = (fence: string): string =>
  `((${sqlStates(TRANSITIONS.claim.from, 't.state')} OR (${sqlStates(TRANSITIONS.dueClaim.from, 't.state')} AND t.due_at <= w.now))${fence}) IS TRUE`;

/**
 * Most ids per statement. Above about 180 ids on a table of 40,000 rows the planner prefers one
 * sequential scan and a hash join to that many probes of the id index (its cost model takes each
 * probe as random reads), which took 10 to 25 times longer with the table cached; chunks of 128
 * keep the probes. A batch of 500 is 4 statements.
 */
const CHUNK = 128;

const RETURNING = `RETURNING w.ord, t.seq, t.id, t.attempts, t.task_type, t.payload, t.timeout_seconds, t.idempotency_key, t.due_at,
  t.partition, t.tenant_id, t.workflow_id, t.traceparent, t.checkpoint, ${RETRY_COLUMNS.split(', ')
    .map((c) => `t.${c}`)
    .join(', ')}`;

const SET = `state = ${sqlState(TRANSITIONS.claim.to)}, attempts = t.attempts + 1, worker_id = w.worker, started_at = w.now,
  lease_expires_at = w.lease, cancel_requested = 0, updated_at = w.now`;

/** Embedded mode: owner_epoch is neither read nor written. Each id with its worker, start time and lease end. */
const CLAIM = `
  UPDATE tasks t SET ${SET}
  FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[]) WITH ORDINALITY AS w(id, worker, now, lease, ord)
  WHERE t.id = w.id AND ${claimable('')}
  ${RETURNING}`;

/** Cluster mode: each id under its fencing token. */
const CLAIM_FENCED = `
  UPDATE tasks t SET ${SET}, owner_epoch = w.epoch
  FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[]) WITH ORDINALITY AS w(id, worker, now, lease, epoch, ord)
  WHERE t.id = w.id AND w.epoch >= 0 AND ${claimable(' AND t.owner_epoch <= w.epoch')}
  ${RETURNING}`;

const UPSTREAM = `
  SELECT e.downstream_id AS id, u.workflow_task_id AS key, u.result AS result
  FROM workflow_edges e JOIN tasks u ON u.id = e.upstream_id
  WHERE e.downstream_id = ANY($1::text[])
  ORDER BY u.seq`;

type ClaimRow = Pick<
  TaskRow,
  | 'seq'
  | 'id'
  | 'attempts'
  | 'task_type'
  | 'payload'
  | 'timeout_seconds'
  | 'idempotency_key'
  | 'due_at'
  | 'partition'
  | 'tenant_id'
  | 'workflow_id'
  | 'traceparent'
  | 'checkpoint'
  | 'max_retries'
  | 'retry_backoff'
  | 'retry_delay_seconds'
  | 'max_retry_delay_seconds'
  | 'retry_jitter'
  | 'retry_base'
> & { ord: number };

/** One claim of {@link claimTaskBatches}: `claimTasks`'s arguments. */
export interface ClaimRequest {
  ids: readonly string[];
  workerId: string;
  /** Start time of the attempts (epoch ms): `started_at`, and the due test of SCHEDULED/RETRYING tasks. */
  now: number;
  leaseMs: number;
  /** Cluster mode: a fencing token per id (−1: not held, never claimed). */
  epochs?: readonly number[];
}

/** True when `claimTaskBatches(requests)` writes in one statement: at most {@link CHUNK} ids, each named once. */
export function claimIsOneStatement(requests: readonly ClaimRequest[]): boolean {
  const ids = new Set<string>();
  for (const r of requests) {
    for (const id of r.ids) {
      if (ids.has(id) || ids.size === CHUNK) return false;
      ids.add(id);
    }
  }
  return true;
}

/** Claims the claimable ones of `ids` for `workerId` (see the file header). */
export async function claimTasks(
  db: Db,
  ids: string[],
  workerId: string,
  now: number,
  leaseMs: number,
  epochs?: readonly number[],
  _seqs?: readonly number[],
): Promise<ClaimedTask[]> {
  return (await claimTaskBatches(db, [{ ids, workerId, now, leaseMs, ...(epochs ? { epochs } : {}) }]))[0];
}

/**
 * Several claims in the same statements (see the file header): the result of each, in the order
 * of `requests`, is what `claimTasks` would return for it. An id named by two requests is claimed
 * by the first (the second finds it RUNNING). The requests are all fenced or all not (one
 * store's mode); a mix is written fenced, a request without epochs under the token −1 (nothing).
 */
export async function claimTaskBatches(db: Db, requests: readonly ClaimRequest[]): Promise<ClaimedTask[][]> {
  const fenced = requests.some((r) => r.epochs !== undefined);
  // Every id with its request: positions in id order lock the rows in id order, one chunk after
  // the other; an id named twice goes to its first request first (the second chunk position).
  const flat: Array<{ id: string; req: number; pos: number; epoch: number }> = [];
  requests.forEach((r, req) =>
    r.ids.forEach((id, pos) => flat.push({ id, req, pos, epoch: r.epochs === undefined ? (fenced ? -1 : 0) : (r.epochs[pos] ?? -1) })),
  );
  const out: ClaimRow[][] = requests.map(() => []);
  if (flat.length === 0) return out.map(() => []);
  const order = flat.map((_, i) => i).sort((a, b) => (flat[a].id < flat[b].id ? -1 : flat[a].id > flat[b].id ? 1 : a - b));
  // A second claim of one id in the same statement would not see the first: such ids wait for a later chunk.
  const chunks: number[][] = [];
  let chunk: number[] = [];
  let ids = new Set<string>();
  for (const i of order) {
    if (chunk.length === CHUNK || ids.has(flat[i].id)) {
      chunks.push(chunk);
      chunk = [];
      ids = new Set();
    }
    chunk.push(i);
    ids.add(flat[i].id);
  }
  chunks.push(chunk);
  for (const c of chunks) {
    const params: unknown[] = [
      c.map((i) => flat[i].id),
      c.map((i) => requests[flat[i].req].workerId),
      c.map((i) => atMs(requests[flat[i].req].now)),
      c.map((i) => untilMs(requests[flat[i].req].now + requests[flat[i].req].leaseMs)),
    ];
    if (fenced) params.push(c.map((i) => flat[i].epoch));
    const { rows: claimed } = await db.query<ClaimRow>(fenced ? CLAIM_FENCED : CLAIM, params, fenced ? 'claim_fenced' : 'claim');
    for (const r of claimed) {
      const f = flat[c[r.ord - 1]];
      out[f.req].push({ ...r, ord: f.pos });
    }
  }
  for (const rows of out) rows.sort((a, b) => a.ord - b.ord);
  const upstream = await upstreamResults(
    db,
    out.flat().filter((r) => r.workflow_id),
  );
  return out.map((rows, req) => claimedTasks(rows, atMs(requests[req].now), upstream));
}

/** The claimed rows of one request as ClaimedTasks. */
function claimedTasks(rows: ClaimRow[], now: number, upstream: Map<string, Record<string, unknown>>): ClaimedTask[] {
  // Claimed tasks mostly share their retry settings: equal settings share one frozen object.
  let last: { row: ClaimRow; settings: RetrySettings } | null = null;
  const retryOf = (r: ClaimRow): RetrySettings => {
    if (last && sameRetry(last.row, r)) return last.settings;
    last = { row: r, settings: Object.freeze(retryFromRow(r)) };
    return last.settings;
  };
  return rows.map((r) => {
    const task: ClaimedTask = {
      id: r.id,
      seq: r.seq,
      workflowId: r.workflow_id ?? null,
      attempt: r.attempts,
      taskType: r.task_type,
      payload: parseJson(r.payload),
      timeoutSeconds: r.timeout_seconds,
      idempotencyKey: r.idempotency_key,
      dueAt: r.due_at,
      retry: retryOf(r),
      partition: r.partition,
      tenantId: r.tenant_id,
      startedAt: now,
    };
    if (r.traceparent) task.traceparent = r.traceparent;
    if (r.checkpoint !== null && r.checkpoint !== undefined) task.lastCheckpoint = parseJson(r.checkpoint);
    if (r.workflow_id) task.upstreamResults = upstream.get(r.id) ?? {};
    return task;
  });
}

/** True when both rows carry the same retry settings. */
function sameRetry(a: ClaimRow, b: ClaimRow): boolean {
  return (
    a.max_retries === b.max_retries &&
    a.retry_backoff === b.retry_backoff &&
    a.retry_delay_seconds === b.retry_delay_seconds &&
    a.max_retry_delay_seconds === b.max_retry_delay_seconds &&
    a.retry_jitter === b.retry_jitter &&
    a.retry_base === b.retry_base
  );
}

/** Downstream id → its upstream tasks' results keyed by workflow-local id (one statement). */
async function upstreamResults(db: Db, claimed: ClaimRow[]): Promise<Map<string, Record<string, unknown>>> {
  const byTask = new Map<string, Record<string, unknown>>();
  if (claimed.length === 0) return byTask;
  const { rows } = await db.query<{ id: string; key: string; result: string | null }>(UPSTREAM, [claimed.map((r) => r.id)]);
  for (const u of rows) {
    let results = byTask.get(u.id);
    if (!results) {
      results = {};
      byTask.set(u.id, results);
    }
    // defineProperty: a local id such as "__proto__" stays a plain key.
    Object.defineProperty(results, u.key, { value: parseJson(u.result), enumerable: true, writable: true, configurable: true });
  }
  return byTask;
}
