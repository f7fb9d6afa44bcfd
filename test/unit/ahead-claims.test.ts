import { expect } from 'chai';
import { AheadClaims } from '../../src/actors/dispatcher/ahead-claims';
import type { ClaimedTask } from '../../src/domain/task';
import { dueEntry } from './helpers/fixtures';

const T = Date.UTC(2026, 0, 1);

/** A claimed attempt as `claimTasksAhead` answers it: its planned start is its due time. */
function claimed(id: string, dueAt: number, seq: number, attempt = 1): ClaimedTask {
  return {
    id,
    seq,
    attempt,
    taskType: 'noop',
    payload: null,
    timeoutSeconds: 30,
    idempotencyKey: null,
    dueAt,
    retry: { maxRetries: 0, backoff: 'fixed', delaySeconds: 1, maxDelaySeconds: null, jitter: null, attemptBase: 0 } as never,
    partition: 0,
    tenantId: 't',
    startedAt: dueAt,
  };
}

describe('AheadClaims: entries handed out before their due time, and attempts claimed ahead', () => {
  it('holds attempts per worker and gives them out only once due, in due order, at most `max` at a time', () => {
    const a = new AheadClaims<string>();
    a.hold('w1', [claimed('b', T + 20, 2), claimed('a', T + 10, 1), claimed('c', T + 20, 3)]);
    a.hold('w2', [claimed('d', T + 5, 4)]);
    expect(a.heldCount).to.equal(4);
    expect(a.nextDueAfter(T)).to.equal(T + 5);
    expect(a.nextDueAfter(T + 5)).to.equal(T + 10); // w2's first is due: it waits for a slot, not a time
    expect(a.takeDue('w1', T + 9, 10)).to.deep.equal([]); // none early
    expect(a.takeDue('w1', T + 10, 10).map((t) => t.id)).to.deep.equal(['a']);
    expect(a.takeDue('w1', T + 30, 1).map((t) => t.id)).to.deep.equal(['b']);
    expect(a.takeDue('w1', T + 30, 5).map((t) => t.id)).to.deep.equal(['c']);
    expect(a.heldCountOf('w1')).to.equal(0);
    expect(a.heldOf('w2')).to.deep.equal([{ taskId: 'd', attempt: 1 }]);
    expect(a.holds('d', 1)).to.equal(true);
    expect(a.holds('d', 2)).to.equal(false);
  });

  it('a dropped attempt (a cancel) is returned once and never given out; an attempt not held is not found', () => {
    const a = new AheadClaims<string>();
    a.hold('w1', [claimed('a', T, 1), claimed('b', T, 2)]);
    expect(a.drop('a', 2)).to.equal(undefined); // another attempt
    expect(a.drop('a', 1)?.id).to.equal('a');
    expect(a.drop('a', 1)).to.equal(undefined);
    expect(a.holds('a', 1)).to.equal(false);
    expect(a.heldCountOf('w1')).to.equal(1); // the dropped one no longer counts against its worker
    expect(a.takeDue('w1', T, 10).map((t) => t.id)).to.deep.equal(['b']);
    expect(a.heldCount).to.equal(0);
    a.hold('w2', [claimed('c', T + 40, 3)]);
    expect(a.drop('c', 1)?.id).to.equal('c');
    expect(a.heldCountOf('w2')).to.equal(0);
    expect(a.nextDueAfter(T), 'no wake for a dropped attempt').to.equal(null);
    expect(a.workersHolding()).to.deep.equal([]);
  });

  it("a taken attempt is held no more (not found, not in heldOf) while the rest stay, through the index's compaction", () => {
    const a = new AheadClaims<string>();
    const n = 30_000; // taken ones outnumber 4 × held + 10,000 before the end: the index is rebuilt on the way
    a.hold(
      'w1',
      Array.from({ length: n }, (_, i) => claimed(`t${i}`, T + i, i)),
    );
    a.hold('w2', [claimed('other', T, n)]);
    expect(a.takeDue('w1', T + n - 11, n).length).to.equal(n - 10);
    expect(a.heldCount).to.equal(11);
    expect(a.holds('t0', 1)).to.equal(false);
    expect(a.holds(`t${n - 10}`, 1)).to.equal(true);
    expect(a.holds('other', 1)).to.equal(true);
    expect(a.heldOf('w1').map((h) => h.taskId)).to.deep.equal(Array.from({ length: 10 }, (_, i) => `t${n - 10 + i}`));
    expect(a.drop('t0', 1)).to.equal(undefined); // taken: a cancel must reach it as a running attempt
    a.hold('w2', [claimed('t0', T + 5, n + 1, 2)]); // its retry, claimed ahead again
    expect(a.holds('t0', 2)).to.equal(true);
    expect(a.takeDue('w1', T + n, n).length).to.equal(10);
    expect(a.takeDue('w2', T + n, n).map((t) => `${t.id}/${t.attempt}`)).to.deep.equal(['other/1', 't0/2']);
    expect(a.heldCount).to.equal(0);
    expect(a.holds(`t${n - 1}`, 1)).to.equal(false);
  });

  it("a replaced worker's held attempts all come back at once; the other worker keeps its own", () => {
    const a = new AheadClaims<string>();
    a.hold('w1', [claimed('a', T + 50, 1), claimed('b', T + 10, 2)]);
    a.hold('w2', [claimed('c', T + 10, 3)]);
    expect(
      a
        .dropWorker('w1')
        .map((t) => t.id)
        .sort(),
    ).to.deep.equal(['a', 'b']);
    expect(a.heldCount).to.equal(1);
    expect(a.dropWorker('w1')).to.deep.equal([]);
    expect(a.takeDue('w2', T + 10, 10).map((t) => t.id)).to.deep.equal(['c']);
    expect(a.nextDueAfter(T)).to.equal(null);
  });

  it('entries to claim come out per pool earliest due first, ties in the order they came; entries not to claim wait until due', () => {
    const a = new AheadClaims<string>();
    a.addToClaim('p1', dueEntry({ id: 'x', dueAt: T + 100, state: 'SCHEDULED' }));
    a.addToClaim('p1', dueEntry({ id: 'y', dueAt: T + 50, state: 'SCHEDULED' }));
    a.addToClaim('p1', dueEntry({ id: 'w', dueAt: T + 100, state: 'SCHEDULED', seq: 0 }));
    a.addToClaim('p2', dueEntry({ id: 'z', dueAt: T + 50, state: 'SCHEDULED' }));
    a.addNotYetDue(dueEntry({ id: 'k2', dueAt: T + 30, state: 'SCHEDULED' }));
    a.addNotYetDue(dueEntry({ id: 'k1', dueAt: T + 20, state: 'SCHEDULED' }));
    expect([...a.poolsToClaim()]).to.deep.equal(['p1', 'p2']);
    expect(a.toClaimCount('p1')).to.equal(3);
    expect(a.takeToClaim('p1', 1).map((e) => e.id)).to.deep.equal(['y']);
    expect(a.takeToClaim('p1', 0)).to.deep.equal([]);
    expect(
      a.takeToClaim('p1', 9).map((e) => e.id),
      'a tie keeps the order it came in, whatever its seq',
    ).to.deep.equal(['x', 'w']);
    expect([...a.poolsToClaim()]).to.deep.equal(['p2']);
    expect(a.nextDueAfter(T)).to.equal(T + 20);
    expect(a.takeNowDue(T + 19)).to.deep.equal([]); // none early
    expect(a.takeNowDue(T + 30).map((e) => e.id)).to.deep.equal(['k1', 'k2']);
    expect(a.nextDueAfter(T), 'z, still to claim, comes due: it then goes the usual way').to.equal(T + 50);
    expect(a.takeToClaim('p2', 9).map((e) => e.id)).to.deep.equal(['z']);
    expect(a.nextDueAfter(T)).to.equal(null);
  });

  it("entries that came due before their claim ahead are all taken out, each pool's in due order, none early", () => {
    const a = new AheadClaims<string>();
    for (const [id, dueAt] of [
      ['a', 10],
      ['b', 10],
      ['c', 30],
      ['d', 20],
    ] as const)
      a.addToClaim('p1', dueEntry({ id, dueAt: T + dueAt, state: 'SCHEDULED' }));
    a.addToClaim('p2', dueEntry({ id: 'e', dueAt: T + 10, state: 'SCHEDULED' }));
    expect(a.takeDueToClaim(T + 9)).to.deep.equal([]);
    expect(a.nextDueAfter(T)).to.equal(T + 10);
    // d, handed out after c but due before it, is not held up behind c.
    expect(a.takeDueToClaim(T + 20).map((e) => e.id)).to.deep.equal(['a', 'b', 'd', 'e']);
    expect([...a.poolsToClaim()]).to.deep.equal(['p1']);
    expect(a.toClaimCount('p1')).to.equal(1);
    expect(a.nextDueAfter(T + 20)).to.equal(T + 30);
    expect(a.takeDueToClaim(T + 29)).to.deep.equal([]);
    expect(a.takeDueToClaim(T + 30).map((e) => e.id)).to.deep.equal(['c']);
    expect([...a.poolsToClaim()]).to.deep.equal([]);
    expect(a.nextDueAfter(T)).to.equal(null);
  });

  it('never asks for a wake at or before now for an entry to claim that is due already (the pump takes those first)', () => {
    const a = new AheadClaims<string>();
    a.addToClaim('p1', dueEntry({ id: 'a', dueAt: T + 10, state: 'SCHEDULED' }));
    a.addToClaim('p1', dueEntry({ id: 'b', dueAt: T + 40, state: 'SCHEDULED' }));
    a.addToClaim('p2', dueEntry({ id: 'c', dueAt: T + 25, state: 'SCHEDULED' }));
    for (const now of [T + 10, T + 15]) {
      const at = a.nextDueAfter(now);
      expect(at === null || at > now, `at ${now - T}: ${at === null ? null : at - T}`).to.equal(true);
    }
    expect(a.takeDueToClaim(T + 15).map((e) => e.id)).to.deep.equal(['a']);
    expect(a.nextDueAfter(T + 15)).to.equal(T + 25);
    // One pool alone: once the due one is taken (as the pump does first), the one behind it is seen.
    const one = new AheadClaims<string>();
    one.addToClaim('p1', dueEntry({ id: 'a', dueAt: T + 10, state: 'SCHEDULED' }));
    one.addToClaim('p1', dueEntry({ id: 'b', dueAt: T + 40, state: 'SCHEDULED' }));
    expect(one.takeDueToClaim(T + 10).map((e) => e.id)).to.deep.equal(['a']);
    expect(one.nextDueAfter(T + 10)).to.equal(T + 40);
  });
});
