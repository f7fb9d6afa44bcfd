import { AttemptLogLine, lineSize, logLine, MAX_LOG_BYTES, MAX_LOG_LINES } from './attempt-log';

/** One log line an external worker posted: when, the message, and its fields (with its level among them). */
export interface PostedLogLine {
  /** Epoch ms. */
  at: number;
  message: string;
  fields: Record<string, unknown>;
}

/**
 * Numbers lines posted for an attempt after those it keeps (`kept`, oldest first) and applies the
 * bounds of `ctx.log` (domain/attempt-log.ts): each line cut to its maximum, the attempt's last
 * {@link MAX_LOG_LINES} lines and {@link MAX_LOG_BYTES} characters of text.
 * @returns the new lines still inside the bounds and the first line number kept (the store drops those before it)
 */
export function numberPostedLines(
  kept: readonly AttemptLogLine[],
  posted: readonly PostedLogLine[],
): { lines: AttemptLogLine[]; keepFrom: number } {
  let next = kept.length > 0 ? kept[kept.length - 1].n + 1 : 1;
  const added = posted.map((p) => logLine(next++, p.at, p.message, p.fields));
  const all = [...kept, ...added];
  let bytes = all.reduce((sum, l) => sum + lineSize(l), 0);
  let first = 0;
  while (all.length - first > MAX_LOG_LINES || (bytes > MAX_LOG_BYTES && all.length - first > 1)) bytes -= lineSize(all[first++]);
  const keepFrom = all.length > 0 ? all[Math.min(first, all.length - 1)].n : 1;
  return { lines: added.filter((l) => l.n >= keepFrom), keepFrom };
}
