import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { partitionOf } from '../../src/domain/partition';

const TWO_32 = 2 ** 32;

describe('partitionOf', () => {
  it('is 32-bit FNV-1a: published test vectors (mod 2^32 gives the raw hash)', () => {
    expect(partitionOf('', TWO_32)).to.equal(0x811c9dc5);
    expect(partitionOf('a', TWO_32)).to.equal(0xe40c292c);
    expect(partitionOf('foobar', TWO_32)).to.equal(0xbf9cf968);
  });

  it('gives stable known values (pinned: changing them would move stored tasks)', () => {
    expect(partitionOf('a', 64)).to.equal(0xe40c292c % 64);
    expect(partitionOf('foobar', 64)).to.equal(0xbf9cf968 % 64);
    expect(partitionOf('a', 1000)).to.equal(220); // 0xe40c292c = 3826002220
    const id = '0b7e6c1e-3f3a-4d8e-9a57-2f1d7c9b4e10';
    const first = partitionOf(id, 64);
    for (let i = 0; i < 10; i++) expect(partitionOf(id, 64)).to.equal(first);
  });

  it('is always an integer in [0, P)', () => {
    for (const p of [1, 2, 3, 7, 64, 1000, 4096]) {
      for (let i = 0; i < 500; i++) {
        const v = partitionOf(randomUUID(), p);
        expect(Number.isInteger(v), `P=${p}`).to.equal(true);
        expect(v).to.be.at.least(0).and.below(p);
      }
    }
  });

  it('P = 1 maps everything to partition 0', () => {
    for (const id of ['', 'x', randomUUID(), 'ü✓']) expect(partitionOf(id, 1)).to.equal(0);
  });

  it('spreads 64,000 random UUIDs roughly evenly over 64 partitions (each within ±30% of the mean)', () => {
    const P = 64;
    const N = 64_000;
    const counts = new Array<number>(P).fill(0);
    for (let i = 0; i < N; i++) counts[partitionOf(randomUUID(), P)]++;
    const mean = N / P;
    for (let p = 0; p < P; p++) {
      expect(counts[p], `partition ${p}`).to.be.within(mean * 0.7, mean * 1.3);
    }
  });

  it('spreads sequential ids (a tenant burst with numbered ids) over all 64 partitions', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 10_000; i++) seen.add(partitionOf(`task-${i}`, 64));
    expect(seen.size).to.equal(64);
  });
});
