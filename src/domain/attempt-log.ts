/**
 * The `ctx.log` lines kept with an attempt: numbered from 1, bounded to the last
 * {@link MAX_LOG_LINES} lines and {@link MAX_LOG_BYTES} of text per attempt (older lines are
 * dropped, and the count of those dropped is shown), each line cut to {@link MAX_LINE_CHARS}.
 * The worker keeps the window ({@link AttemptLogWindow}) and sends new lines with the number of
 * the first line still kept; the store appends them and drops the lines before it.
 */
import { cutText } from './text-cut';

/** Most lines kept per attempt (the last ones). */
export const MAX_LOG_LINES = 200;
/** Most characters of message and fields text kept per attempt (about 64 KiB of ASCII). */
export const MAX_LOG_BYTES = 65_536;
/** Most characters of one line's message, and of its fields as JSON text. */
export const MAX_LINE_CHARS = 4096;

/** One `ctx.log(message, fields)` line of an attempt. */
export interface AttemptLogLine {
  /** 1-based number of the line in its attempt. */
  n: number;
  /** When the handler logged it (epoch ms, the worker's clock). */
  at: number;
  message: string;
  /** The fields given, as JSON text (null: none, or not JSON). */
  fields: string | null;
  /** True when the message or fields were cut (or the fields were not JSON). */
  truncated: boolean;
}

/** New lines of one attempt, and the first line number still kept (lines before it are dropped). */
export interface AttemptLogAppend {
  taskId: string;
  attempt: number;
  lines: AttemptLogLine[];
  keepFrom: number;
}

/** An attempt's kept lines, oldest first, and how many earlier lines were dropped. */
export interface AttemptLog {
  taskId: string;
  attempt: number;
  lines: AttemptLogLine[];
  /** Lines logged before the first kept one (dropped by the bounds). */
  droppedLines: number;
}

/** A lone UTF-16 surrogate: half of a pair without its other half (with the `u` flag a pair is one code point, outside the class). */
const LONE_SURROGATE = /\p{Cs}/gu;

/**
 * `message` and `fields` as one bounded line (numbered `n`, logged at `at`). A NUL in the message is
 * kept as U+FFFD: PostgreSQL's text cannot hold U+0000, and the line (with every other line written
 * beside it) would be refused; `fields` are JSON text, where it is the escape `\u0000`. A lone
 * surrogate is one U+FFFD too: the stores keep text as UTF-8, which cannot hold one (SQLite read
 * it back as three U+FFFD).
 */
export function logLine(n: number, at: number, message: unknown, fields?: unknown): AttemptLogLine {
  let text: string;
  try {
    text = (typeof message === 'string' ? message : String(message)).replace(LONE_SURROGATE, '\ufffd').replaceAll('\u0000', '\ufffd');
  } catch {
    text = '[a message that cannot be read]';
  }
  let truncated = false;
  if (text.length > MAX_LINE_CHARS) {
    text = cutText(text, MAX_LINE_CHARS);
    truncated = true;
  }
  let json: string | null = null;
  if (fields !== undefined && fields !== null) {
    try {
      json = JSON.stringify(fields) ?? null;
    } catch {
      truncated = true; // a cycle or a BigInt: the fields are left out
    }
    if (json !== null && json.length > MAX_LINE_CHARS) {
      json = null;
      truncated = true;
    }
  }
  return { n, at, message: text, fields: json, truncated };
}

/** The size a line counts for against {@link MAX_LOG_BYTES}. */
export function lineSize(line: AttemptLogLine): number {
  return line.message.length + (line.fields?.length ?? 0);
}

/**
 * One attempt's log as the worker keeps it: numbers each line, tracks the window of the last
 * lines within the bounds, and hands out the lines not yet sent ({@link takeNew}).
 */
export class AttemptLogWindow {
  /** Sizes of the lines in the window, oldest first, and their sum. */
  private readonly sizes: number[] = [];
  private bytes = 0;
  /** Number of the oldest line in the window (1 while nothing was dropped). */
  private first = 1;
  private next = 1;
  private unsent: AttemptLogLine[] = [];

  /** Adds a line logged at `at` (epoch ms). */
  add(at: number, message: unknown, fields?: unknown): void {
    const line = logLine(this.next++, at, message, fields);
    const size = lineSize(line);
    this.sizes.push(size);
    this.bytes += size;
    this.unsent.push(line);
    while (this.sizes.length > MAX_LOG_LINES || (this.bytes > MAX_LOG_BYTES && this.sizes.length > 1)) {
      this.bytes -= this.sizes.shift() as number;
      this.first++;
    }
    if (this.unsent.length > 0 && this.unsent[0].n < this.first) this.unsent = this.unsent.filter((l) => l.n >= this.first);
  }

  /** True when lines were added since the last {@link takeNew}. */
  get hasNew(): boolean {
    return this.unsent.length > 0;
  }

  /** The lines not sent yet (those still in the window) and the first line number kept. */
  takeNew(): { lines: AttemptLogLine[]; keepFrom: number } {
    const lines = this.unsent;
    this.unsent = [];
    return { lines, keepFrom: this.first };
  }
}

/**
 * An attempt's log from its stored lines (any order; lines before `keepFrom` are ignored by the
 * caller's store already): sorted, with the dropped count taken from the first kept number.
 */
export function attemptLogOf(taskId: string, attempt: number, lines: AttemptLogLine[]): AttemptLog {
  const sorted = [...lines].sort((a, b) => a.n - b.n);
  return { taskId, attempt, lines: sorted, droppedLines: sorted.length > 0 ? sorted[0].n - 1 : 0 };
}
