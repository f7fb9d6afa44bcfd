/**
 * The side-effect log of the soak: the handler module every soak task type runs, and the check
 * that each acknowledged task's side effect happened exactly once.
 *
 * The handler (written into the temp dir, loaded by the service's workers) fails the first
 * attempt of a task whose payload has `fail_first: true` (a retryable error), and otherwise
 * appends one line to its own file `<dir>/effects.<worker pid>` with a plain write(2) (kept by the
 * kernel if the worker dies): the payload's `seq` (a number the harness gave the task), or
 * `c<task id>` for a task without one (cron instances share their definition's payload).
 * SeqBook records which seqs were acknowledged; verifyEffects() reads every file after the drain.
 */
import fs from 'node:fs';
import path from 'node:path';

/** The CommonJS source of the handler module; `dir` is where the effect files go. */
export function handlerSource(dir: string): string {
  return `'use strict';
const fs = require('node:fs');
const file = ${JSON.stringify(path.join(dir, 'effects.'))} + process.pid;
let fd = null;
module.exports = async (payload, ctx) => {
  const p = payload !== null && typeof payload === 'object' ? payload : {};
  if (p.fail_first === true && ctx.attempt === 1) throw new Error('soak: the first attempt fails on purpose');
  if (fd === null) fd = fs.openSync(file, 'a');
  fs.writeSync(fd, (typeof p.seq === 'number' ? String(p.seq) : 'c' + ctx.taskId) + '\\n');
  return null;
};
`;
}

/** The soak's task kinds (each its own task type, so /metrics counts them apart). */
export const KINDS = ['peak', 'steady', 'retry', 'flood', 'workflow', 'cron'] as const;
export type Kind = (typeof KINDS)[number];
export const taskType = (k: Kind): string => `soak_${k}`;

/** Seq numbers handed out to tasks, and which of them the service acknowledged, by kind. */
export class SeqBook {
  private next = 0;
  private kinds = new Uint8Array(1 << 16); // 0 = not acknowledged, else 1 + kind index
  /** Seqs sent in requests that failed without an answer: the tasks may or may not exist. */
  readonly unknown: number[] = [];

  /** `n` consecutive fresh seqs; @returns the first */
  take(n: number): number {
    const first = this.next;
    this.next += n;
    while (this.kinds.length < this.next) {
      const bigger = new Uint8Array(this.kinds.length * 2);
      bigger.set(this.kinds);
      this.kinds = bigger;
    }
    return first;
  }

  acknowledge(seq: number, kind: Kind): void {
    this.kinds[seq] = 1 + KINDS.indexOf(kind);
  }

  /** Seqs handed out so far. */
  get size(): number {
    return this.next;
  }

  kindOf(seq: number): Kind | null {
    const k = seq < this.next ? this.kinds[seq] : 0;
    return k === 0 ? null : KINDS[k - 1];
  }

  /** Acknowledged tasks by kind. */
  acknowledgedByKind(): Record<string, number> {
    const out: Record<string, number> = {};
    for (let s = 0; s < this.next; s++) {
      const k = this.kindOf(s);
      if (k !== null) out[k] = (out[k] ?? 0) + 1;
    }
    return out;
  }
}

/** What the effect files say against the acknowledgements. */
export interface EffectCheck {
  files: number;
  lines: number;
  /** Acknowledged tasks with no side effect, by kind, and the first few seqs. */
  missing: Record<string, number>;
  missing_examples: number[];
  /** Seqs (or cron task ids) with more than one side effect. */
  duplicated: number;
  duplicated_examples: string[];
  /** Side effects of seqs never acknowledged (a request that failed without answer may still have made them). */
  unacknowledged: number;
  cron_effects: number;
  /** Cron task ids the service says it created that have no side effect. */
  cron_missing: number;
  ok: boolean;
}

/**
 * Reads every effect file of `dir` and compares with `book` and the cron task ids the service
 * recorded (`cronTaskIds`, only fires whose task had ended when read).
 */
export function verifyEffects(dir: string, book: SeqBook, cronTaskIds: string[]): EffectCheck {
  const counts = new Uint8Array(book.size);
  const cron = new Map<string, number>();
  let files = 0;
  let lines = 0;
  let duplicated = 0;
  let unacknowledged = 0;
  const dupEx: string[] = [];
  for (const f of fs.readdirSync(dir)) {
    if (!f.startsWith('effects.')) continue;
    files++;
    for (const line of fs.readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      if (line === '') continue;
      lines++;
      if (line.startsWith('c')) {
        const n = (cron.get(line) ?? 0) + 1;
        cron.set(line, n);
        if (n === 2) {
          duplicated++;
          if (dupEx.length < 5) dupEx.push(line);
        }
        continue;
      }
      const seq = Number(line);
      if (!Number.isInteger(seq) || seq < 0 || seq >= book.size) {
        unacknowledged++;
        continue;
      }
      if (book.kindOf(seq) === null) unacknowledged++;
      if (counts[seq] < 255) counts[seq]++;
      if (counts[seq] === 2) {
        duplicated++;
        if (dupEx.length < 5) dupEx.push(line);
      }
    }
  }
  const missing: Record<string, number> = {};
  const missingEx: number[] = [];
  for (let s = 0; s < book.size; s++) {
    const k = book.kindOf(s);
    if (k === null || counts[s] > 0) continue;
    missing[k] = (missing[k] ?? 0) + 1;
    if (missingEx.length < 5) missingEx.push(s);
  }
  const cronMissing = cronTaskIds.filter((id) => !cron.has(`c${id}`)).length;
  const nMissing = Object.values(missing).reduce((a, b) => a + b, 0);
  return {
    files,
    lines,
    missing,
    missing_examples: missingEx,
    duplicated,
    duplicated_examples: dupEx,
    unacknowledged,
    cron_effects: cron.size,
    cron_missing: cronMissing,
    ok: nMissing === 0 && duplicated === 0 && cronMissing === 0,
  };
}
