import { DueEntry, PRIORITIES, TASK_STATES } from '../domain/task';

/**
 * The coordination messages between nodes (Redis pub/sub, or PostgreSQL LISTEN/NOTIFY without
 * Redis: see coordination-bus.ts), one channel each, as JSON. Every
 * message names the node that sent it (`from`), so a node ignores its own.
 */
export interface CoordinationMessages {
  /** A task due inside the horizon was stored on another node: wake the owner of `partition`. */
  wake: { from: string; partition: number; entries: DueEntry[] };
  /** Cancel of a RUNNING task: the node running `taskId`'s `attempt` aborts its handler. */
  cancel: { from: string; taskId: string; attempt: number };
  /** Tasks (and workflows) another node recorded as terminal: long polls (`?wait=`) here re-read them. */
  ended: { from: string; taskIds: string[]; workflowIds: string[] };
  /** Tenant weights, start limits or concurrency limits were changed through another node: read the stored ones again. */
  limits: { from: string };
  /**
   * Membership changed: another member left (graceful stop) and released its leases, joined, or
   * released partitions it handed over: run a lease round now. (Named for its first use; kept for
   * nodes of earlier versions, which run a round on it too.)
   */
  left: { from: string };
  /** A cron definition was created, edited or deleted through another node: re-read it. */
  cron: { from: string; cronId: string };
  /**
   * A pull worker's lease request `waiterId` waits on node `from` for tasks of pull queue `queue`
   * and that node has none ready: the owners of other partitions may {@link grant} it up to `max`
   * of theirs within `waitMs` (docs/CLUSTER.md "Pull queues").
   */
  pull: { from: string; waiterId: string; queue: string; max: number; waitMs: number };
  /** Lease request `waiterId` of node `from` was answered or went away: drop its {@link pull}. */
  unpull: { from: string; waiterId: string };
  /**
   * Ready tasks of `queue` the owner `from` took (its fairness, priorities and rate limits) for
   * lease request `waiterId` of node `to`, each with the owner's fencing token for its partition:
   * node `to` claims them for its worker; what it does not claim goes back to the owner as a `wake`.
   */
  grant: { from: string; to: string; waiterId: string; queue: string; grants: PullGrant[] };
}

/** One task granted to another node's lease request: its due entry and the owner's fencing epoch of its partition. */
export interface PullGrant {
  entry: DueEntry;
  epoch: number;
}

export type Channel = keyof CoordinationMessages;

export const CHANNELS: readonly Channel[] = ['wake', 'cancel', 'ended', 'limits', 'left', 'cron', 'pull', 'unpull', 'grant'];

const PRIORITY_SET = new Set<string>(PRIORITIES);
const STATE_SET = new Set<string>(TASK_STATES);

const isInt = (v: unknown, min = 0): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 1000;
/** Longest `waitMs` of a `pull` (ms): an hour, far above the longest lease wait. */
const MAX_PULL_WAIT_MS = 3_600_000;
/** Most tasks one `pull` may ask for, or one `grant` carry. */
const MAX_PULL_TASKS = 1000;

function isGrant(v: unknown): v is PullGrant {
  const g = v as Record<string, unknown>;
  return (
    typeof g === 'object' &&
    g !== null &&
    Number.isSafeInteger(g.epoch) &&
    isInt((g.entry as DueEntry | null)?.partition) &&
    isDueEntry(g.entry, (g.entry as DueEntry).partition)
  );
}

function isDueEntry(v: unknown, partition: number): v is DueEntry {
  const e = v as Record<string, unknown>;
  return (
    typeof e === 'object' &&
    e !== null &&
    isText(e.id) &&
    e.partition === partition &&
    isInt(e.seq) &&
    typeof e.dueAt === 'number' &&
    Number.isFinite(e.dueAt) &&
    PRIORITY_SET.has(e.priority as string) &&
    isText(e.tenantId) &&
    isText(e.taskType) &&
    STATE_SET.has(e.state as string)
  );
}

/**
 * Reads a message received on `channel`. @returns the typed message, or null for anything that is
 * not valid JSON of the channel's shape (another version, a stray PUBLISH): such a message is
 * dropped and counted, never thrown.
 */
export function parseMessage<C extends Channel>(channel: C, text: string): CoordinationMessages[C] | null {
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof v !== 'object' || v === null || !isText(v.from)) return null;
  if (channel === 'wake') {
    if (!isInt(v.partition) || !Array.isArray(v.entries) || v.entries.length > 100_000) return null;
    const p = v.partition;
    if (!v.entries.every((e) => isDueEntry(e, p))) return null;
    return v as unknown as CoordinationMessages[C];
  }
  if (channel === 'ended') {
    const ids = (a: unknown) => Array.isArray(a) && a.length <= 100_000 && a.every(isText);
    return ids(v.taskIds) && ids(v.workflowIds) ? (v as unknown as CoordinationMessages[C]) : null;
  }
  if (channel === 'limits' || channel === 'left') return v as unknown as CoordinationMessages[C];
  if (channel === 'cron') return isText(v.cronId) ? (v as unknown as CoordinationMessages[C]) : null;
  if (channel === 'pull') {
    const ok =
      isText(v.waiterId) &&
      isText(v.queue) &&
      isInt(v.max, 1) &&
      v.max <= MAX_PULL_TASKS &&
      isInt(v.waitMs) &&
      v.waitMs <= MAX_PULL_WAIT_MS;
    return ok ? (v as unknown as CoordinationMessages[C]) : null;
  }
  if (channel === 'unpull') return isText(v.waiterId) ? (v as unknown as CoordinationMessages[C]) : null;
  if (channel === 'grant') {
    const ok =
      isText(v.to) &&
      isText(v.waiterId) &&
      isText(v.queue) &&
      Array.isArray(v.grants) &&
      v.grants.length <= MAX_PULL_TASKS &&
      v.grants.every(isGrant);
    return ok ? (v as unknown as CoordinationMessages[C]) : null;
  }
  if (!isText(v.taskId) || !isInt(v.attempt, 1)) return null;
  return v as unknown as CoordinationMessages[C];
}
