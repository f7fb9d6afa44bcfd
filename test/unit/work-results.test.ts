import { expect } from 'chai';
import { wellFormedResults } from '../../src/actors/dispatcher/work-results';

const ok = { id: 't1', attempt: 1, outcome: { kind: 'succeeded', result: null }, durationMs: 3 };

describe('wellFormedResults (a worker channel any handler can write to)', () => {
  it('keeps well-formed entries of every outcome kind, the same array when all are', () => {
    const results = [
      ok,
      { id: 't2', attempt: 2, outcome: { kind: 'failed', message: 'm', errorType: 'Error', permanent: false }, durationMs: 0 },
      { id: 't3', attempt: 1, outcome: { kind: 'cancelled' }, durationMs: 1, handlerRunning: true },
    ];
    const got = wellFormedResults(results);
    expect(got.refused).to.equal(0);
    expect(got.results).to.equal(results);
  });

  it('refuses entries of the wrong shape, keeping the others', () => {
    const bad: unknown[] = [
      null,
      'x',
      { ...ok, outcome: null },
      { ...ok, outcome: { kind: 'won' } },
      { ...ok, outcome: { kind: 'succeeded' } },
      { ...ok, outcome: { kind: 'failed', message: 1, errorType: 'E', permanent: false } },
      { ...ok, id: 7 },
      { ...ok, attempt: 0 },
      { ...ok, attempt: 1.5 },
      { ...ok, durationMs: Number.NaN },
      { ...ok, handlerRunning: 'yes' },
    ];
    const got = wellFormedResults([ok, ...bad]);
    expect(got.refused).to.equal(bad.length);
    expect(got.results).to.deep.equal([ok]);
  });

  it('a message without a results array is one refusal', () => {
    expect(wellFormedResults(undefined)).to.deep.equal({ results: [], refused: 1 });
    expect(wellFormedResults({ 0: ok })).to.deep.equal({ results: [], refused: 1 });
  });
});
