/**
 * The processes below a worker process: what its handlers started themselves (`child_process`,
 * a shell), which a SIGKILL of the worker alone leaves running (re-parented, they would go on
 * beside the attempt's retry). Read from Linux's `/proc/<pid>/stat` (field 4, the parent pid); on a
 * system without `/proc` nothing is found and only the worker is killed. A process that detached
 * itself (a double fork, `setsid` and re-parenting) is no longer below the worker and is not found.
 */
import fs from 'node:fs';

/** Reads a directory's names and a file's text: `node:fs` in production, a fake in tests. */
export interface ProcReader {
  list(dir: string): string[];
  read(file: string): string;
}

const NODE_FS: ProcReader = {
  list: (dir) => fs.readdirSync(dir),
  read: (file) => fs.readFileSync(file, 'utf8'),
};

/**
 * The parent pid in the text of `/proc/<pid>/stat`: the field after the command name, which is in
 * parentheses and may itself hold spaces and parentheses (so read after the last `)`).
 * @returns null when the text is not of that shape
 */
export function parentPidOf(stat: string): number | null {
  const end = stat.lastIndexOf(')');
  if (end < 0) return null;
  const fields = stat.slice(end + 2).split(' ');
  const ppid = Number(fields[1]);
  return Number.isSafeInteger(ppid) ? ppid : null;
}

/**
 * Every descendant of `pid` (children, their children, …), parents before their children.
 * Never throws: a process that ends while `/proc` is read is skipped, and no `/proc` gives [].
 */
export function descendantsOf(pid: number, proc: ProcReader = NODE_FS): number[] {
  let names: string[];
  try {
    names = proc.list('/proc');
  } catch {
    return [];
  }
  const children = new Map<number, number[]>();
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let ppid: number | null;
    try {
      ppid = parentPidOf(proc.read(`/proc/${name}/stat`));
    } catch {
      continue; // ended meanwhile
    }
    if (ppid === null) continue;
    const list = children.get(ppid);
    if (list) list.push(Number(name));
    else children.set(ppid, [Number(name)]);
  }
  const out: number[] = [];
  const todo = [pid];
  while (todo.length > 0) {
    const next = children.get(todo.shift() as number) ?? [];
    for (const child of next) {
      if (out.includes(child) || child === pid) continue;
      out.push(child);
      todo.push(child);
    }
  }
  return out;
}

/**
 * SIGKILLs `pid` and every process below it (read before the kill: once the worker is gone its
 * children are re-parented and can no longer be told apart). Never throws.
 * @returns the descendants that were signalled
 */
export function killProcessTree(pid: number, proc: ProcReader = NODE_FS, kill: (pid: number) => void = sigkill): number[] {
  const below = descendantsOf(pid, proc);
  for (const p of [pid, ...below]) kill(p);
  return below;
}

/**
 * SIGKILLs the processes below this one, then this process itself (for a thread of it that acts
 * while its event loop is blocked: the descendants go first, since nothing runs after the
 * process's own kill). Never throws.
 */
export function killOwnTree(proc: ProcReader = NODE_FS, kill: (pid: number) => void = sigkill): void {
  killOwnDescendants(proc, kill);
  kill(process.pid);
}

/**
 * SIGKILLs the processes below this one (for a worker about to exit on its own: once it is gone,
 * what its handlers started is re-parented and would go on beside the attempts' retries).
 * Never throws.
 * @returns the descendants that were signalled
 */
export function killOwnDescendants(proc: ProcReader = NODE_FS, kill: (pid: number) => void = sigkill): number[] {
  const below = descendantsOf(process.pid, proc);
  for (const p of below) kill(p);
  return below;
}

function sigkill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}
