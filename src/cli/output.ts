import { SingleBar, Presets } from 'cli-progress';

/** Where a command writes: results to `out` (stdout), progress and errors to `err` (stderr). */
export interface Io {
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream & { isTTY?: boolean };
  /** `--json`: machine-readable output on stdout, nothing decorative. */
  json: boolean;
}

/**
 * Characters a terminal acts on rather than shows: C0 controls (newline, tab, ESC, which starts the
 * escape sequences that recolour, move the cursor or retitle the window), DEL, C1 controls, the
 * line and paragraph separators, and the bidirectional overrides and isolates (which make text read
 * in another order than it is stored: CVE-2021-42574, "Trojan Source").
 */
// eslint-disable-next-line no-control-regex -- control characters are what it finds
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** Each {@link UNPRINTABLE} character of `text` as its `\uXXXX` escape. */
function escapeUnprintable(text: string): string {
  return text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A value as a table cell: strings as they are, null as `-`, objects as compact JSON. A string
 * holding a character a terminal would act on (stored by whoever named a cron, a workflow or a
 * task type: another tenant's key can) is shown as a JSON string with that character escaped, so
 * it can neither break the table's lines nor send escape sequences to the reader's terminal.
 */
function cell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'string') {
    UNPRINTABLE.lastIndex = 0;
    return UNPRINTABLE.test(v) ? escapeUnprintable(JSON.stringify(v)) : v;
  }
  return escapeUnprintable(JSON.stringify(v));
}

/**
 * Renders rows as aligned columns under upper-case headers (the kubectl style).
 * @param columns [header, key] pairs; a key reads that field of each row
 */
export function table(rows: object[], columns: Array<[string, string]>): string {
  const cells = rows.map((r) => columns.map(([, key]) => cell((r as Record<string, unknown>)[key])));
  const widths = columns.map(([h], i) => Math.max(h.length, ...cells.map((c) => c[i].length)));
  const line = (values: string[]) => values.map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i]))).join('  ');
  return [line(columns.map(([h]) => h)), ...cells.map(line)].join('\n') + '\n';
}

/** A page as a table, with the flag that reads the next page when there is one. */
export function pageTable(rows: object[], columns: Array<[string, string]>, nextCursor: string | null): string {
  return table(rows, columns) + (nextCursor ? `next page: --cursor ${nextCursor}\n` : '');
}

/** Renders one object as `key: value` lines (nested values as compact JSON). */
export function details(obj: object): string {
  const keys = Object.keys(obj);
  const values = obj as Record<string, unknown>;
  const width = Math.max(0, ...keys.map((k) => k.length));
  return keys.map((k) => `${(k + ':').padEnd(width + 1)} ${cell(values[k])}`).join('\n') + '\n';
}

/** Writes `value` as JSON (with `--json`) or as the text `human()` makes. */
export function print(io: Io, value: unknown, human: () => string): void {
  io.out.write(io.json ? `${JSON.stringify(value, null, 2)}\n` : human());
}

/** A progress bar on stderr, shown only on a terminal and never with `--json`. */
export interface Progress {
  increment(n?: number): void;
  stop(): void;
}

/**
 * Starts a progress bar for `total` steps (cli-progress) when stderr is a terminal and output is
 * not `--json`; otherwise a silent one, so scripts and pipes see only results.
 */
export function progress(io: Io, total: number, label: string): Progress {
  if (io.json || !io.err.isTTY || total <= 1) return { increment: () => undefined, stop: () => undefined };
  const bar = new SingleBar(
    {
      format: `${label} [{bar}] {value}/{total} {percentage}% | {eta_formatted} left`,
      stream: io.err as NodeJS.WriteStream,
      hideCursor: true,
    },
    Presets.shades_classic,
  );
  bar.start(total, 0);
  return { increment: (n = 1) => bar.increment(n), stop: () => bar.stop() };
}
