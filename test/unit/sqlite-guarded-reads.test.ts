import { expect } from 'chai';
import { guardReads } from '../../src/storage/sqlite/guarded-reads';

/** The embedded store's read bundle behind its health (src/storage/sqlite/guarded-reads.ts). */
describe('guardReads', () => {
  const mapped = (err: unknown) => new Error(`mapped: ${(err as Error).message}`);
  const corrupt = () => {
    throw Object.assign(new Error('database disk image is malformed'), { code: 'SQLITE_CORRUPT' });
  };

  it('passes results through and maps a thrown error, at any depth of plain objects', () => {
    const reads = guardReads({ one: (n: number) => n + 1, tasks: { getTask: corrupt, count: () => 3 }, limit: 7 }, mapped);
    expect(reads.one(1)).to.equal(2);
    expect(reads.tasks.count()).to.equal(3);
    expect(reads.limit).to.equal(7);
    expect(() => reads.tasks.getTask()).to.throw('mapped: database disk image is malformed');
  });

  it('maps a rejection of a read that returns a promise', async () => {
    const reads = guardReads({ later: () => Promise.reject(new Error('short read')) }, mapped);
    const err = await reads.later().then(
      () => null,
      (e: unknown) => e,
    );
    expect((err as Error).message).to.equal('mapped: short read');
  });
});
