/**
 * claimTasks — inputs: ids, workerId, now, leaseMs. Transition `claim`: PENDING → RUNNING with
 * attempts + 1, worker_id, started_at = now, lease_expires_at = now + leaseMs, cancel flag cleared.
 * A SCHEDULED or RETRYING task already due (`due_at <= now`) is claimed the same way: transitions
 * `due` and `claim` in one write, for a claim that comes before the task's due mark.
 * One `findOneAndUpdate` per distinct id whose filter (`_id`, claimable state) is the
 * compare-and-set. Output: a ClaimedTask per id whose claim won, in input order (others are
 * skipped: cancelled, already claimed, unknown). Guarantee: the server applies each update
 * atomically, so of two racing claims (two dispatchers, two nodes) exactly one sees it claimable:
 * one attempt number is handed out once. A workflow task also gets its upstream tasks' results,
 * keyed by their workflow-local ids (one read of its `upstream_ids`).
 * With `epochs` (cluster mode, a fencing token per id): the filter also requires owner_epoch
 * (absent = 0) <= the id's token and the update sets owner_epoch; a negative token never claims
 * (no write is sent).
 */
import { ClaimedTask } from '../../../domain/task';
import type { MongoCollections } from '../collections';
import { claimedFromDoc, fromJson } from '../documents';
import { chunks } from './workflow-progress';
import { mapBounded, WRITE_PARALLELISM } from './bounded';
import { epochAtMost } from './fencing';
import { TRANSITIONS } from '../../../domain/state-machine';
import { inStates } from '../state-filter';

export async function claimTasks(
  c: MongoCollections,
  ids: string[],
  workerId: string,
  now: number,
  leaseMs: number,
  epochs?: readonly number[],
): Promise<ClaimedTask[]> {
  const tokens = new Map<string, number | undefined>();
  ids.forEach((id, i) => {
    if (!tokens.has(id)) tokens.set(id, epochs === undefined ? undefined : (epochs[i] ?? -1));
  });
  const claimable = {
    $or: [{ state: inStates(TRANSITIONS.claim.from) }, { state: inStates(TRANSITIONS.dueClaim.from), due_at: { $lte: now } }],
  };
  const running = {
    state: TRANSITIONS.claim.to,
    worker_id: workerId,
    started_at: now,
    lease_expires_at: now + leaseMs,
    cancel_requested: false,
    updated_at: now,
  };
  const docs = await mapBounded([...tokens], WRITE_PARALLELISM, async ([id, epoch]) => {
    if (epoch !== undefined && epoch < 0) return null;
    return c.tasks.findOneAndUpdate(
      epoch === undefined ? { _id: id, ...claimable } : { _id: id, ...claimable, ...epochAtMost(epoch) },
      { $set: epoch === undefined ? running : { ...running, owner_epoch: epoch }, $inc: { attempts: 1 } },
      { returnDocument: 'after' },
    );
  });
  const claimed: ClaimedTask[] = [];
  for (const d of docs) {
    if (!d) continue;
    const task = claimedFromDoc(d, now);
    if (d.workflow_id) task.upstreamResults = await upstreamResultsOf(c, d.upstream_ids ?? []);
    claimed.push(task);
  }
  return claimed;
}

/** Results of the given upstream tasks keyed by their workflow-local ids, in the upstream tasks' submission order (as the SQL stores). */
async function upstreamResultsOf(c: MongoCollections, ids: string[]): Promise<Record<string, unknown>> {
  const found: Array<{ seq: number; key: string; result: unknown }> = [];
  for (const part of chunks(ids)) {
    for (const u of await c.tasks.find({ _id: { $in: part } }, { projection: { workflow_task_id: 1, result: 1, seq: 1 } }).toArray()) {
      found.push({ seq: u.seq, key: u.workflow_task_id as string, result: fromJson(u.result) });
    }
  }
  found.sort((a, b) => a.seq - b.seq);
  const out: Record<string, unknown> = {};
  // defineProperty: a local id such as "__proto__" stays a plain key.
  for (const u of found) Object.defineProperty(out, u.key, { value: u.result, enumerable: true, writable: true, configurable: true });
  return out;
}
