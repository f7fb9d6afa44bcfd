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
  /** Another member left (graceful stop) and released its leases: run a lease round now. */
  left: { from: string };
  /** A cron definition was created, edited or deleted through another node: re-read it. */
  cron: { from: string; cronId: string };
}

export type Channel = keyof CoordinationMessages;

export const CHANNELS: readonly Channel[] = ['wake', 'cancel', 'ended', 'limits', 'left', 'cron'];

const PRIORITY_SET = new Set<string>(PRIORITIES);
const STATE_SET = new Set<string>(TASK_STATES);

const isInt = (v: unknown, min = 0): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= min;
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 1000;

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
  if (!isText(v.taskId) || !isInt(v.attempt, 1)) return null;
  return v as unknown as CoordinationMessages[C];
}
