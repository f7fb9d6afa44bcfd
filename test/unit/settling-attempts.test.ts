import { expect } from 'chai';
import type { RunningAttempt } from '../../src/actors/dispatcher/attempt-watchdog';
import { SettlingAttempts } from '../../src/actors/dispatcher/settling-attempts';
import type { WorkResult } from '../../src/actors/protocol';

const running = new Map<string, RunningAttempt>([
  ['a', { task: { id: 'a', attempt: 2 }, workerId: 'w1' } as unknown as RunningAttempt],
  ['b', { task: { id: 'b', attempt: 1 }, workerId: 'w1' } as unknown as RunningAttempt],
]);
const cancelled = (id: string, attempt: number, handlerRunning?: true): WorkResult => ({
  id,
  attempt,
  outcome: { kind: 'cancelled' },
  durationMs: 7,
  ...(handlerRunning ? { handlerRunning } : {}),
});

describe('SettlingAttempts: outcomes held until the aborted handler stops', () => {
  it('holds only handlerRunning reports of an attempt running on that worker; returns the rest in order', () => {
    const s = new SettlingAttempts();
    const report = [cancelled('x', 1), cancelled('a', 2, true), cancelled('b', 1), cancelled('a', 1, true)];
    expect(s.hold(running, 'w1', report).map((r) => `${r.id}#${r.attempt}`)).to.deep.equal(['x#1', 'b#1', 'a#1']);
    expect(s.size).to.equal(1);
    expect(s.outcomeOf('a', 2)).to.deep.equal({ kind: 'cancelled' });
    expect(s.hold(running, 'w2', [cancelled('b', 1, true)]), 'another worker: not held').to.have.length(1);
    expect(s.size).to.equal(1);
  });

  it('take gives the held result once; forget drops it; a report without held attempts is returned as is', () => {
    const s = new SettlingAttempts();
    const plain = [cancelled('b', 1)];
    expect(s.hold(running, 'w1', plain)).to.equal(plain);
    s.hold(running, 'w1', [cancelled('a', 2, true), cancelled('b', 1, true)]);
    expect(s.take([{ id: 'a', attempt: 2 }])).to.deep.equal([{ id: 'a', attempt: 2, outcome: { kind: 'cancelled' }, durationMs: 7 }]);
    expect(s.take([{ id: 'a', attempt: 2 }])).to.deep.equal([]);
    s.forget([{ id: 'b', attempt: 1 }]);
    expect(s.outcomeOf('b', 1)).to.equal(undefined);
    expect(s.size).to.equal(0);
  });
});
