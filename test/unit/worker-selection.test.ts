import { expect } from 'chai';
import { WorkerSelection } from '../../src/actors/dispatcher/worker-selection';

/** Workers with these free slots (all running). */
const free = (...credits: number[]) => credits.map((c, i) => ({ pid: 10 + i, credits: c }));

describe('WorkerSelection: least loaded worker first, ties in turn', () => {
  it('2 workers × 4 free slots, 4 attempts → 2 and 2', () => {
    expect(new WorkerSelection().split(free(4, 4), 4, 64)).to.deep.equal([2, 2]);
  });

  it('uneven free slots: the freer worker first, until the free slots even out', () => {
    const s = new WorkerSelection();
    expect(s.split(free(1, 4), 1, 64)).to.deep.equal([0, 1]);
    expect(s.split(free(1, 4), 3, 64)).to.deep.equal([0, 3]);
    expect(s.split(free(2, 6), 6, 64)).to.deep.equal([1, 5]); // 2:6 → 2:2 after 4, then one each
  });

  it('one attempt at a time on idle workers: they take turns (not all on the first)', () => {
    const s = new WorkerSelection();
    const picks = Array.from({ length: 6 }, () => s.split(free(4, 4, 4), 1, 64).indexOf(1));
    expect(picks).to.deep.equal([0, 1, 2, 0, 1, 2]);
  });

  it('a worker whose process is down (pid 0) or full gets nothing', () => {
    const workers = [
      { pid: 0, credits: 8 },
      { pid: 11, credits: 0 },
      { pid: 12, credits: 3 },
    ];
    expect(new WorkerSelection().split(workers, 5, 64)).to.deep.equal([0, 0, 3]);
  });

  it('a worker whose last ping went unanswered (its loop held) gets nothing', () => {
    const workers = [
      { pid: 10, credits: 8, unanswered: true },
      { pid: 11, credits: 3, unanswered: false },
    ];
    expect(new WorkerSelection().split(workers, 5, 64)).to.deep.equal([0, 3]);
  });

  it('at most `max` per worker (one claim each), the rest left unplaced', () => {
    expect(new WorkerSelection().split(free(100, 100), 150, 64)).to.deep.equal([64, 64]);
    expect(new WorkerSelection().split(free(100, 10), 40, 16)).to.deep.equal([16, 10]);
  });
});
