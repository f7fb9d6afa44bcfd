/**
 * reserveSeq — inputs: counter name (`task_seq`, `cron_seq`, `workflow_seq`), n ≥ 1. Output: the first of n
 * consecutive sequence numbers reserved for the caller (the range first … first + n − 1).
 * Guarantee: one `findOneAndUpdate $inc` on the counter document in `meta` (upserted on first
 * use), so two callers — two nodes included — never get overlapping ranges; a range reserved by a
 * call that then fails is simply skipped (sequence numbers are increasing, not dense). Listing,
 * cursors and the start order of tied waiting tasks only need "increasing in insertion order",
 * which holds for the writes of one store (its writes are serialized) and approximately across
 * nodes.
 */
import type { Collection, Filter, OptionalUnlessRequiredId } from 'mongodb';
import { isDuplicateKey } from '../documents';
import type { MongoCollections } from '../collections';

/** How many new numbers one insert takes after collisions on `seq` before it gives up. */
export const SEQ_RETRIES = 5;

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

/**
 * After a duplicate-key error on inserting the document `id` into `coll`: true when the key was
 * `seq` (the document is not stored, so `_id`, the only other unique key, did not collide).
 * One `countDocuments` by `_id`.
 */
export async function collidedOnSeq<T extends { _id: string }>(coll: Collection<T>, id: string): Promise<boolean> {
  return (await coll.countDocuments({ _id: id } as Filter<T>, { limit: 1 })) === 0;
}

/**
 * insertNumbered — inputs: a collection whose documents have a unique `seq`, its counter, and
 * the document to store given its number. One `insertOne` with a number from reserveSeq. A
 * duplicate key whose `_id` is not stored was on `seq`: a new number is taken and the insert
 * repeated (at most SEQ_RETRIES times). MongoDB's `$inc` never hands out a number twice; FerretDB
 * 1.x's does under concurrent nodes (its updates are not atomic). Output: the number stored.
 * @throws the duplicate-key error when `_id` is taken, or any other driver error
 */
export async function insertNumbered<T extends { _id: string; seq: number }>(
  c: MongoCollections,
  coll: Collection<T>,
  counter: 'cron_seq' | 'workflow_seq',
  make: (seq: number) => T,
): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const doc = make(await reserveSeq(c, counter, 1));
    try {
      await coll.insertOne(doc as OptionalUnlessRequiredId<T>);
      return doc.seq;
    } catch (err) {
      if (!isDuplicateKey(err) || attempt >= SEQ_RETRIES || !(await collidedOnSeq(coll, doc._id))) throw err;
    }
  }
}
