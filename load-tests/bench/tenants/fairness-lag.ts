/**
 * B's figures in the fairness scenario, from its tasks read back and its trickle's send instants:
 * dispatch lag (started_at − due_at) split at an instant, per second of due_at, started_at minus
 * the send instant, and the acknowledgement round trip split at an instant. All in ms.
 */
import { distribution, Distribution } from '../stats';
import { lagReport, TaskView } from '../task-lag';
import type { Pacer } from './pacer';

/** Lag of the trickle's tasks, overall and split at an instant (Date ms) by due_at. */
export function splitLag(tasks: TaskView[], splitWall: number | null): Record<string, unknown> {
  const all = lagReport(tasks, tasks.length);
  if (splitWall === null) return { ...all };
  const before = tasks.filter((t) => t.due_at !== null && Date.parse(t.due_at) <= splitWall);
  const after = tasks.filter((t) => t.due_at !== null && Date.parse(t.due_at) > splitWall);
  return {
    ...all,
    while_a_submitting: distribution(
      before.filter((t) => t.started_at).map((t) => Date.parse(t.started_at as string) - Date.parse(t.due_at as string)),
    ),
    after_a_last_ack: distribution(
      after.filter((t) => t.started_at).map((t) => Date.parse(t.started_at as string) - Date.parse(t.due_at as string)),
    ),
  };
}

/** B's dispatch lag per second of due_at from `origin` (Date ms): where in the run the large lags are. */
export function lagBySecond(tasks: TaskView[], origin: number): Array<Record<string, number | null>> {
  const buckets = new Map<number, number[]>();
  for (const t of tasks) {
    if (!t.started_at || !t.due_at) continue;
    const due = Date.parse(t.due_at);
    const k = Math.floor((due - origin) / 1000);
    const list = buckets.get(k) ?? [];
    list.push(Date.parse(t.started_at) - due);
    buckets.set(k, list);
  }
  return [...buckets.keys()]
    .sort((a, b) => a - b)
    .map((k) => {
      const d = distribution(buckets.get(k) as number[]);
      return { second: k, n: d.count, p50_ms: d.p50_ms, p99_ms: d.p99_ms, max_ms: d.max_ms };
    });
}

/**
 * started_at − the harness's send instant (ms) of the trickle's tasks: the lag as B sees it,
 * including the time its submission waited to be accepted (same machine, same clock).
 */
export function startAfterSend(tasks: TaskView[], pacer: Pacer) {
  const sentAt = new Map(pacer.tasks.map((t) => [t.task_id, t.sent_wall]));
  return distribution(
    tasks
      .filter((t) => t.started_at && sentAt.has(t.task_id))
      .map((t) => Date.parse(t.started_at as string) - (sentAt.get(t.task_id) as number)),
  );
}

/** Dispatch lags (ms) of the tasks whose due_at (Date ms) is in [from, to). */
export function lagsDueIn(tasks: TaskView[], from: number, to: number): Distribution {
  const lags: number[] = [];
  for (const t of tasks) {
    if (!t.started_at || !t.due_at) continue;
    const due = Date.parse(t.due_at);
    if (due >= from && due < to) lags.push(Date.parse(t.started_at) - due);
  }
  return distribution(lags);
}

/** Acknowledgement round trips (ms) of the trickle's submissions sent in [from, to) (Date ms). */
export function acksSentIn(pacer: Pacer, from: number, to: number): Distribution {
  return distribution(pacer.tasks.filter((t) => t.sent_wall >= from && t.sent_wall < to).map((t) => t.ack_ms));
}
