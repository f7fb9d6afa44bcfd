/**
 * The wire format of the worker processes' liveness beats (one JSON line per beat), shared by the
 * worker's liveness thread that writes them and the dispatcher's listener that reads them.
 */

/** One liveness beat: a worker process (its id and pid) is alive. */
export interface LivenessBeat {
  workerId: string;
  pid: number;
}

/** A beat line, or null when it is not one. */
export function parseBeat(line: string): LivenessBeat | null {
  try {
    const v = JSON.parse(line) as { w?: unknown; p?: unknown };
    if (typeof v.w !== 'string' || typeof v.p !== 'number' || !Number.isInteger(v.p) || v.p <= 0) return null;
    return { workerId: v.w, pid: v.p };
  } catch {
    return null;
  }
}

/** The line a worker writes for one beat ({@link parseBeat} reads it). */
export function beatLine(workerId: string, pid: number): string {
  return `${JSON.stringify({ w: workerId, p: pid })}\n`;
}
