import { expect } from 'chai';
import { volumeBytesOf, walBoundBytes, walBoundPages, WAL_MAX_PAGES, WAL_MIN_PAGES } from '../../src/storage/sqlite/wal-bound';

/** The writer's WAL bound: a sixteenth of the store's volume, 1 MiB to 64 MiB (an 8 MiB volume was filled by the WAL alone). */
describe('WAL bound per volume size', () => {
  const MiB = 1024 * 1024;
  it('64 MiB from a 1 GiB volume up (and when the size is unknown); a sixteenth below; never under 1 MiB', () => {
    expect(walBoundPages(null)).to.equal(WAL_MAX_PAGES);
    expect(walBoundBytes(walBoundPages(1024 * MiB))).to.equal(64 * MiB);
    expect(walBoundBytes(walBoundPages(500 * 1024 * MiB))).to.equal(64 * MiB);
    expect(walBoundBytes(walBoundPages(256 * MiB))).to.equal(16 * MiB);
    expect(walBoundBytes(walBoundPages(64 * MiB))).to.equal(4 * MiB);
    expect(walBoundPages(8 * MiB)).to.equal(WAL_MIN_PAGES);
    expect(walBoundPages(0)).to.equal(WAL_MAX_PAGES);
  });

  it("reads the size of a file's volume", () => {
    expect(volumeBytesOf(__filename)).to.be.a('number').and.above(0);
    expect(volumeBytesOf('/nonexistent-dir/x/y.db')).to.equal(null);
  });
});
