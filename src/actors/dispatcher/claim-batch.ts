import type { ClaimedTask, DueEntry } from '../../domain/task';
import { ActorRouter, byPartition } from '../router';

/**
 * Gives the entries of a claim batch back to their partition owners: `released` for those
 * claimed or refused for good, and `offer` again for a refused entry that was handed out before
 * its due mark (SCHEDULED or RETRYING) with a due time the clock, read at the claim, has not
 * reached. Its owner saw it due, so the clock stepped back since the hand-out (the `Clock`
 * contract allows it) and the claim refused it as early; back in the owner's window, it is handed
 * out again once the clock passes its due time, instead of waiting for the next window read.
 * @param now the clock's reading the claim was written with (epoch ms)
 * @returns the refused entries (cancelled, rescheduled or claimed meanwhile, or early)
 */
export function returnToOwners(
  router: ActorRouter,
  entries: readonly DueEntry[],
  claimed: readonly ClaimedTask[],
  now: number,
): DueEntry[] {
  if (claimed.length === entries.length) {
    // The usual case: every entry was claimed (a claim answers only ids it was given, each once),
    // so all are released and none refused; no set of ids to build and look up.
    for (const [p, ids] of byPartition(entries, (e) => e.id)) router.released(p, ids);
    return [];
  }
  const won = new Set(claimed.map((t) => t.id));
  const early = (e: DueEntry) => !won.has(e.id) && e.state !== 'PENDING' && e.dueAt > now;
  for (const [p, list] of byPartition(entries, (e) => e)) {
    if (!router.hasOwner(p)) continue;
    const again = list.filter(early);
    const done = again.length === 0 ? list : list.filter((e) => !early(e));
    if (done.length > 0)
      router.released(
        p,
        done.map((e) => e.id),
      );
    if (again.length > 0) router.offerLocal(p, again);
  }
  return entries.filter((e) => !won.has(e.id));
}
