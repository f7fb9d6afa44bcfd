/**
 * Claims gathered per group commit (docs/design-notes/postgres-store.md): the dispatcher sends one
 * claim per worker and batch of ready tasks, often a dozen while one transaction commits. The
 * first claim of a group queues one write; the claims that arrive before that write starts join
 * it, and it writes them all in the same statements (`claimTaskBatches`: 128 ids per statement,
 * whatever claim they come from). Each caller gets its own claim's result after the COMMIT, or the
 * write's error.
 *
 * Order: a claim that joins a group is written at the group's place in the write queue, before
 * writes queued between the group's first claim and it. A claim names tasks whose insert was
 * acknowledged (committed) before the dispatcher saw them, so it never overtakes a write it depends
 * on; against an unrelated write (a cancel, another node's claim) any order was possible anyway.
 */
import type { ClaimedTask } from '../../domain/task';
import type { Db } from './db';
import type { OneStatement } from './write-queue';
import { claimIsOneStatement, claimTaskBatches, ClaimRequest } from './ops/claim-tasks';

interface Waiting {
  request: ClaimRequest;
  resolve: (claimed: ClaimedTask[]) => void;
  reject: (err: unknown) => void;
}

/** The open group of claims of one store (see the file header). */
export class ClaimGroups {
  /** Claims waiting for the queued write that will take them; null when none is queued. */
  private open: Waiting[] | null = null;

  /**
   * @param write queues a write in the store's group commit (resolves after its COMMIT); a group
   *   whose claims make one statement may run bare (`oneStatement`, asked when it starts)
   * @param startOf the start time to write for a claim requested at `now` (epoch ms): the store
   *   uses the later of `now` and its clock when the write runs
   */
  constructor(
    private readonly write: (op: (db: Db) => Promise<ClaimedTask[][]>, oneStatement: OneStatement) => Promise<ClaimedTask[][]>,
    private readonly startOf: (now: number) => number,
  ) {}

  /** `claimTasks` of the store: resolves with what `request` claimed, after the COMMIT. */
  claim(request: ClaimRequest): Promise<ClaimedTask[]> {
    return new Promise<ClaimedTask[]>((resolve, reject) => {
      if (this.open) {
        this.open.push({ request, resolve, reject });
        return;
      }
      const group: Waiting[] = [{ request, resolve, reject }];
      this.open = group;
      this.write(
        (db) => {
          // The group closes when its write first runs (a re-run after a rollback writes the same claims).
          if (this.open === group) this.open = null;
          return claimTaskBatches(
            db,
            group.map((w) => ({ ...w.request, now: this.startOf(w.request.now) })),
          );
        },
        () => claimIsOneStatement(group.map((w) => w.request)),
      ).then(
        (results) => group.forEach((w, i) => w.resolve(results[i])),
        (err: unknown) => {
          // A write rejected without running (the connection could not be made, the store is
          // closed) leaves its group open: close it, or later claims would join a group never written.
          if (this.open === group) this.open = null;
          group.forEach((w) => w.reject(err));
        },
      );
    });
  }
}
