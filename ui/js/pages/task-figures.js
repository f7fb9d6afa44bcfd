import { h } from '../dom.js';
import { time } from '../time.js';

/**
 * How a task's figures read on the dashboard: attempts counted per retry budget (a dead-letter
 * replay starts a new budget, a "cycle"), the last error in one line, and progress.
 */

/**
 * The attempts of a task in its current retry budget: `{inCycle, budget, earlier, total}`.
 * `retry_base` (API) is the number of attempts outside the current budget (those before the last
 * replay, and free retries), so `inCycle = attempts - retry_base` of `budget = max_retries + 1`.
 */
export function budgetOf(t) {
  const total = t.attempts ?? 0;
  const earlier = Math.min(total, t.retry_base ?? 0);
  return { inCycle: total - earlier, budget: (t.max_retries ?? 0) + 1, earlier, total };
}

/** "2 of 3" for a list row, with "(+6 before)" when attempts were made outside this budget. */
export function attemptsText(t) {
  const b = budgetOf(t);
  return `${b.inCycle} of ${b.budget}${b.earlier > 0 ? ` (+${b.earlier} before)` : ''}`;
}

/**
 * The replay cycle of each attempt of `history` (`attempt_history`, oldest first): cycle 1 until a
 * DEAD attempt, then one more after each DEAD attempt that was followed by a replay.
 * @returns {cycles: number, byAttempt: Map<attempt, cycle>} `cycles` is the current cycle (1 + replays)
 */
export function replayCycles(t) {
  const history = t.attempt_history ?? [];
  const byAttempt = new Map();
  let cycle = 1;
  for (const a of history) {
    byAttempt.set(a.attempt, cycle);
    if (a.outcome === 'DEAD') cycle++;
  }
  // A task that is DEAD now has not been replayed after its last attempt.
  if (t.status === 'DEAD' && history.length > 0 && history[history.length - 1].outcome === 'DEAD') cycle--;
  return { cycles: cycle, byAttempt };
}

/**
 * The task page's attempts line: "attempt 2 of 3 in cycle 3 (2 replays; 8 attempts in all)", or
 * "attempt 1 of 3" before any replay.
 */
export function attemptsLine(t) {
  const b = budgetOf(t);
  const { cycles } = replayCycles(t);
  const head = b.inCycle === 0 ? `no attempt yet of ${b.budget}` : `attempt ${b.inCycle} of ${b.budget}`;
  if (cycles <= 1 && b.earlier === 0) return head;
  const replays = cycles - 1;
  return `${head} in cycle ${cycles} (${replays} ${replays === 1 ? 'replay' : 'replays'}; ${b.total} attempts in all)`;
}

/** An attempt error in one line: "code: message" (the type when there is no code); '' for none. */
export function errorText(error) {
  if (!error) return '';
  return `${error.code ?? error.type ?? 'error'}: ${error.message ?? ''}`;
}

/** A progress value (a fraction 0..1 or `{done, total, message}`) as `{fraction|null, text}`. */
export function progressParts(p) {
  if (p === null || p === undefined) return null;
  const fraction = typeof p === 'number' ? p : typeof p.done === 'number' && typeof p.total === 'number' ? (p.total === 0 ? 1 : p.done / p.total) : null;
  const text = typeof p === 'number'
    ? `${Math.round(p * 100)} %`
    : [typeof p.done === 'number' ? `${p.done}${typeof p.total === 'number' ? ` of ${p.total}` : ''}` : '', p.message ?? ''].filter(Boolean).join(' · ');
  return { fraction, text };
}

/** A compact progress bar with its text (list rows); '' before any report. */
export function progressBar(p) {
  const parts = progressParts(p);
  if (!parts) return '';
  return h('span', { class: 'progress-cell' }, parts.fraction === null ? null : h('progress', { max: 1, value: parts.fraction }), ` ${parts.text}`);
}

/**
 * The task's last progress report as a bar with its text, the attempt that reported it and when
 * (task page); '' before any report.
 */
export function progressView(t) {
  const parts = progressParts(t.progress);
  if (!parts) return '';
  return h('span', { id: 'task-progress' },
    parts.fraction === null ? null : h('progress', { max: 1, value: parts.fraction }),
    ` ${parts.text} (attempt ${t.progress_attempt}, `, time(t.progress_at), ')');
}
