import { expect } from 'chai';
import { SmoothWeightedRoundRobin } from '../../src/domain/smooth-weighted-round-robin';

const weights: Record<string, number> = { a: 5, b: 1, c: 1 };
const weightOf = (k: string): number => weights[k] ?? 1;

function picks(rr: SmoothWeightedRoundRobin, candidates: string[], n: number): string[] {
  return Array.from({ length: n }, () => rr.pick(candidates) as string);
}

function counts(seq: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of seq) out[k] = (out[k] ?? 0) + 1;
  return out;
}

describe('SmoothWeightedRoundRobin', () => {
  it('weights 5:1:1 give the nginx sequence a,a,b,a,c,a,a', () => {
    const rr = new SmoothWeightedRoundRobin(weightOf);
    expect(picks(rr, ['a', 'b', 'c'], 7)).to.deep.equal(['a', 'a', 'b', 'a', 'c', 'a', 'a']);
  });

  it('repeats the same 7-pick cycle (credits return to 0 after each cycle)', () => {
    const rr = new SmoothWeightedRoundRobin(weightOf);
    const seq = picks(rr, ['a', 'b', 'c'], 700);
    for (let i = 0; i < 700; i += 7) {
      expect(seq.slice(i, i + 7), `cycle at ${i}`).to.deep.equal(['a', 'a', 'b', 'a', 'c', 'a', 'a']);
    }
  });

  it('shares are exact over 7 and 700 picks', () => {
    const rr = new SmoothWeightedRoundRobin(weightOf);
    expect(counts(picks(rr, ['a', 'b', 'c'], 7))).to.deep.equal({ a: 5, b: 1, c: 1 });
    const rr2 = new SmoothWeightedRoundRobin(weightOf);
    expect(counts(picks(rr2, ['a', 'b', 'c'], 700))).to.deep.equal({ a: 500, b: 100, c: 100 });
  });

  it('is smooth: the low-weight candidates are not bunched together', () => {
    const rr = new SmoothWeightedRoundRobin(weightOf);
    const seq = picks(rr, ['a', 'b', 'c'], 70);
    for (let i = 1; i < seq.length; i++) {
      expect(seq[i] !== 'a' && seq[i - 1] !== 'a', `picks ${i - 1},${i}`).to.equal(false);
    }
  });

  it('default weight 1: plain round-robin in candidate order', () => {
    const rr = new SmoothWeightedRoundRobin();
    expect(picks(rr, ['x', 'y', 'z'], 6)).to.deep.equal(['x', 'y', 'z', 'x', 'y', 'z']);
  });

  it('returns undefined for no candidates', () => {
    expect(new SmoothWeightedRoundRobin().pick([])).to.equal(undefined);
  });

  it('only the candidates passed take part: an absent key is never picked', () => {
    const rr = new SmoothWeightedRoundRobin(weightOf);
    const seq = picks(rr, ['b', 'c'], 20);
    expect(seq).to.not.include('a');
    expect(counts(seq)).to.deep.equal({ b: 10, c: 10 });
  });

  it('an absent key earns no credit while it is away', () => {
    const rr = new SmoothWeightedRoundRobin(weightOf);
    picks(rr, ['b', 'c'], 1000); // even count: b and c back to 0, a untouched
    expect(picks(rr, ['a', 'b', 'c'], 7)).to.deep.equal(['a', 'a', 'b', 'a', 'c', 'a', 'a']);
  });

  it('accepts any iterable of candidates (e.g. Map keys)', () => {
    const rr = new SmoothWeightedRoundRobin(weightOf);
    const m = new Map([
      ['a', 1],
      ['b', 1],
      ['c', 1],
    ]);
    const seq = Array.from({ length: 7 }, () => rr.pick(m.keys()));
    expect(seq).to.deep.equal(['a', 'a', 'b', 'a', 'c', 'a', 'a']);
  });

  it('forget() restarts a key at 0 credit', () => {
    // Without forget, picks 4..7 continue the cycle: a, c, a, a.
    const continuing = new SmoothWeightedRoundRobin(weightOf);
    picks(continuing, ['a', 'b', 'c'], 3);
    expect(picks(continuing, ['a', 'b', 'c'], 4)).to.deep.equal(['a', 'c', 'a', 'a']);

    // With every key forgotten, the sequence starts over as on a fresh instance.
    const rr = new SmoothWeightedRoundRobin(weightOf);
    expect(picks(rr, ['a', 'b', 'c'], 3)).to.deep.equal(['a', 'a', 'b']);
    rr.forget('a');
    rr.forget('b');
    rr.forget('c');
    expect(picks(rr, ['a', 'b', 'c'], 7)).to.deep.equal(['a', 'a', 'b', 'a', 'c', 'a', 'a']);
  });

  it('forget() of one key clears only its debt', () => {
    // weights a=3, b=1; candidates [b, a]. Pick 1: a (a: 3-4 = -1, b: 1).
    const w = (k: string): number => (k === 'a' ? 3 : 1);
    const kept = new SmoothWeightedRoundRobin(w);
    const reset = new SmoothWeightedRoundRobin(w);
    expect(kept.pick(['b', 'a'])).to.equal('a');
    expect(reset.pick(['b', 'a'])).to.equal('a');
    reset.forget('a');
    // kept: b 2, a 2 → tie goes to the first candidate, b. reset: b 2, a 3 → a.
    expect(kept.pick(['b', 'a'])).to.equal('b');
    expect(reset.pick(['b', 'a'])).to.equal('a');
  });

  it('forget() of an unknown key is harmless', () => {
    const rr = new SmoothWeightedRoundRobin();
    expect(() => rr.forget('nobody')).not.to.throw();
    expect(rr.pick(['x'])).to.equal('x');
  });
});
