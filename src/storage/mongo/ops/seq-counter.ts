/**
 * reserveSeq — inputs: counter name (`task_seq`, `cron_seq`, `workflow_seq`), n ≥ 1. Output: the first of n
 * consecutive sequence numbers reserved for the caller (the range first … first + n − 1).
 * Guarantee: one `findOneAndUpdate $inc` on the counter document in `meta` (upserted on first
 * use), so two callers — two nodes included — never get overlapping ranges; a range reserved by a
 * call that then fails is simply skipped (sequence numbers are increasing, not dense). Listing and
 * cursors only need "increasing in insertion order", which holds for the writes of one store
 * (its writes are serialized) and approximately across nodes.
 */
import { isDuplicateKey } from '../documents';
import type { MongoCollections } from '../collections';

export async function reserveSeq(c: MongoCollections, counter: 'task_seq' | 'cron_seq' | 'workflow_seq', n: number): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    try {
      const doc = await c.meta.findOneAndUpdate({ _id: counter }, { $inc: { value: n } }, { upsert: true, returnDocument: 'after' });
      if (!doc) throw new Error(`sequence counter ${counter} was not returned`);
      return doc.value - n + 1;
    } catch (err) {
      // Two first uses racing: the loser's upsert hits the _id; the counter exists now, so retry.
      if (!isDuplicateKey(err) || attempt >= 2) throw err;
    }
  }
}
