import { expect } from 'chai';
import { MinHeap } from '../../src/domain/min-heap';
import { seededRandom } from './helpers/fixtures';

const numeric = (a: number, b: number): number => a - b;

function drain<T>(heap: MinHeap<T>): T[] {
  const out: T[] = [];
  for (let v = heap.pop(); v !== undefined; v = heap.pop()) out.push(v);
  return out;
}

describe('MinHeap', () => {
  it('is empty at first: size 0, peek and pop give undefined', () => {
    const heap = new MinHeap<number>(numeric);
    expect(heap.size).to.equal(0);
    expect(heap.peek()).to.equal(undefined);
    expect(heap.pop()).to.equal(undefined);
  });

  it('peek returns the minimum without removing it', () => {
    const heap = new MinHeap<number>(numeric);
    [5, 3, 8, 1, 9].forEach((n) => heap.push(n));
    expect(heap.peek()).to.equal(1);
    expect(heap.size).to.equal(5);
  });

  for (const seed of [1, 2, 3, 42, 2026]) {
    it(`pops 1,000 random numbers in sorted order (seed ${seed})`, () => {
      const rand = seededRandom(seed);
      const heap = new MinHeap<number>(numeric);
      const input = Array.from({ length: 1000 }, () => Math.floor(rand() * 500) - 250); // with duplicates
      input.forEach((n) => heap.push(n));
      expect(heap.size).to.equal(1000);
      const out = drain(heap);
      expect(out).to.deep.equal([...input].sort(numeric));
      expect(heap.size).to.equal(0);
    });
  }

  it('interleaved push/pop always pops the current minimum (model check against a sorted array)', () => {
    const rand = seededRandom(7);
    const heap = new MinHeap<number>(numeric);
    const model: number[] = [];
    for (let step = 0; step < 5000; step++) {
      if (model.length === 0 || rand() < 0.6) {
        const v = rand() * 1000;
        heap.push(v);
        model.push(v);
        model.sort(numeric);
      } else {
        expect(heap.pop()).to.equal(model.shift());
      }
      expect(heap.size).to.equal(model.length);
      expect(heap.peek()).to.equal(model[0]);
    }
    expect(drain(heap)).to.deep.equal(model);
  });

  it('orders by the comparator (a tie-breaking sequence keeps FIFO among equal keys)', () => {
    type Item = { key: number; seq: number };
    const heap = new MinHeap<Item>((a, b) => a.key - b.key || a.seq - b.seq);
    const rand = seededRandom(11);
    const items: Item[] = Array.from({ length: 300 }, (_, seq) => ({ key: Math.floor(rand() * 5), seq }));
    items.forEach((i) => heap.push(i));
    const out = drain(heap);
    expect(out.map((i) => [i.key, i.seq])).to.deep.equal(
      [...items].sort((a, b) => a.key - b.key || a.seq - b.seq).map((i) => [i.key, i.seq]),
    );
  });

  it('supports a max-heap through a reversed comparator', () => {
    const heap = new MinHeap<number>((a, b) => b - a);
    [3, 1, 4, 1, 5, 9, 2, 6].forEach((n) => heap.push(n));
    expect(drain(heap)).to.deep.equal([9, 6, 5, 4, 3, 2, 1, 1]);
  });
});
