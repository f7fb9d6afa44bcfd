import { expect } from 'chai';
import { MinHeap } from '../../src/domain/min-heap';
import { seededRandom } from './helpers/fixtures';

const numeric = (a: number, b: number): number => a - b;

function drain<T>(heap: MinHeap<T>): T[] {
  const out: T[] = [];
  for (let v = heap.pop(); v !== undefined; v = heap.pop()) out.push(v);
  return out;
}

/**
 * `steps` random steps on a heap and on a sorted array (the model): a push of `value()` with
 * probability `pushShare` (always when empty), else a pop, which must give the model's least;
 * size and peek are checked after every step, and the order of what is left at the end.
 */
function modelCheck(rand: () => number, steps: number, pushShare: number, value: () => number): void {
  const heap = new MinHeap<number>(numeric);
  const model: number[] = [];
  for (let step = 0; step < steps; step++) {
    if (model.length === 0 || rand() < pushShare) {
      const v = value();
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
    modelCheck(rand, 5000, 0.6, () => rand() * 1000);
  });

  for (const seed of [3, 19]) {
    it(`mostly in-order pushes (the run beside the heap), interleaved with pops: always the current minimum (seed ${seed})`, () => {
      const rand = seededRandom(seed);
      let next = 0;
      // Mostly the next value up; sometimes a tie, sometimes one from the past (into the heap).
      modelCheck(rand, 6000, 0.7, () => {
        const r = rand();
        return r < 0.8 ? (next += 1) : r < 0.9 ? next : Math.floor(rand() * next);
      });
    });
  }

  it('a long in-order run popped past its compaction point keeps its order and size', () => {
    const heap = new MinHeap<number>(numeric);
    for (let i = 0; i < 5000; i++) heap.push(i);
    for (let i = 0; i < 3000; i++) expect(heap.pop()).to.equal(i);
    heap.push(10); // before the run's last: into the heap, and popped first
    heap.push(6000);
    expect(heap.size).to.equal(2002);
    expect(heap.pop()).to.equal(10);
    expect(drain(heap)).to.deep.equal([...Array.from({ length: 2000 }, (_, i) => 3000 + i), 6000]);
    heap.push(1);
    expect([heap.peek(), heap.size]).to.deep.equal([1, 1]);
  });

  it('clear empties both the heap and the run', () => {
    const heap = new MinHeap<number>(numeric);
    [1, 2, 3, 0].forEach((n) => heap.push(n));
    heap.clear();
    expect([heap.size, heap.peek(), heap.pop()]).to.deep.equal([0, undefined, undefined]);
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
