import fs from 'node:fs';

/** Newline-terminated lines in `file` (0 when it does not exist yet): a side-effect log's length. */
export function countLines(file: string): number {
  if (!fs.existsSync(file)) return 0;
  const buf = fs.readFileSync(file);
  let n = 0;
  for (let i = 0; i < buf.length; i++) if (buf[i] === 10) n++;
  return n;
}

/**
 * Parses a JSON-lines log such as a side-effect log. Lines that are not JSON (torn: written by a
 * process killed mid-write) are returned apart. A missing file is an empty log.
 */
export function readJsonLines<T>(file: string): { lines: T[]; torn: string[] } {
  if (!fs.existsSync(file)) return { lines: [], torn: [] };
  const lines: T[] = [];
  const torn: string[] = [];
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!raw) continue;
    try {
      lines.push(JSON.parse(raw) as T);
    } catch {
      torn.push(raw);
    }
  }
  return { lines, torn };
}

/** Whether `pid` runs: it exists and is not a zombie (exited, not yet reaped), from /proc. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Pids of the child processes of `pid`, over all its threads (`/proc/<pid>/task/<tid>/children`). */
export function childPidsOf(pid: number): number[] {
  const out: number[] = [];
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    const text = fs.readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim();
    if (text) out.push(...text.split(/\s+/).map(Number));
  }
  return out;
}
