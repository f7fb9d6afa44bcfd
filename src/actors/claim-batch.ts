import type { ClaimedTask, DueEntry } from '../domain/task';

/**
 * The `now` a claim of `entries` is written with: the clock's `now`, or the latest due time
 * among the entries when the clock reads earlier. The owner handed them out because its clock had
 * passed their due times; if the clock has stepped back since (the `Clock` contract allows it), a
 * claim at the earlier reading would refuse a due SCHEDULED or RETRYING task as not yet due, and
 * that task would then wait for the owner's next window refresh. A task rescheduled to later
 * meanwhile is still refused: its new due time is later than the one handed out.
 * @param now epoch ms from the scheduler's clock
 * @returns epoch ms, ≥ `now`
 */
export function claimTime(entries: readonly DueEntry[], now: number): number {
  let at = now;
  for (const e of entries) if (e.dueAt > at) at = e.dueAt;
  return at;
}

/** The entries of a claim batch whose claim was refused (cancelled, rescheduled or claimed meanwhile). */
export function refusedOf(entries: readonly DueEntry[], claimed: readonly ClaimedTask[]): DueEntry[] {
  const won = new Set(claimed.map((t) => t.id));
  return entries.filter((e) => !won.has(e.id));
}
