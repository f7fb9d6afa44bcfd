/**
 * lateClaims (src/actors/dispatcher/claim-batch.ts): a claim answered after its attempts' lease
 * ended, or after this member lost the epoch it claimed a partition with (a process stalled by
 * SIGSTOP between sending the claim and reading its answer), starts none of those attempts; a
 * partition given up by hand-over is no loss: its claims answered afterwards start.
 */
import { expect } from 'chai';
import { lateClaims } from '../../src/actors/dispatcher/claim-batch';
import { PartitionFences } from '../../src/cluster/partition-fences';
import { ManualClock } from '../../src/domain/clock';
import type { ClaimedTask, DueEntry } from '../../src/domain/task';

const LEASE_MS = 5000;

function entry(id: string, partition: number): DueEntry {
  return {
    id,
    partition,
    seq: 1,
    dueAt: 0,
    priority: 'normal' as DueEntry['priority'],
    tenantId: 'default',
    taskType: 't',
    state: 'PENDING',
  };
}

function claimed(id: string, partition: number, at: number): ClaimedTask {
  return {
    id,
    attempt: 1,
    taskType: 't',
    payload: null,
    timeoutSeconds: 30,
    idempotencyKey: null,
    dueAt: 0,
    retry: {} as ClaimedTask['retry'],
    partition,
    tenantId: 'default',
    startedAt: at,
  };
}

/**
 * A member holding partitions 0 (epoch 3) and 1 (epoch 4) that sends one claim for task `a` of
 * partition 0 and `b` of partition 1; `late(ids)` asks lateClaims which of the claimed `ids`, answered
 * at the clock's time now, must not start.
 */
function claimSent() {
  const clock = new ManualClock();
  const fences = new PartitionFences();
  fences.grant(0, 3);
  fences.grant(1, 4);
  const now = clock.now();
  const epochs = fences.tokensFor([0, 1]);
  const deps = { clock, config: { leaseMs: LEASE_MS } as never, cluster: { memberId: 'm', fences } };
  const entries = [entry('a', 0), entry('b', 1)];
  const late = (ids: string[]) =>
    lateClaims(
      ids.map((id) => claimed(id, id === 'a' ? 0 : 1, now)),
      epochs,
      entries,
      deps,
      now,
    ).map((t) => t.id);
  return { clock, fences, late };
}

describe('lateClaims: attempts of a claim answered too late are not started', () => {
  const entries = [entry('a', 0), entry('b', 1)];

  it('starts everything answered in time with the epochs still held', () => {
    const { clock, late } = claimSent();
    clock.advance(LEASE_MS - 1);
    expect(late(['a', 'b'])).to.deep.equal([]);
  });

  it('drops every attempt when the answer came once their attempt lease had ended', () => {
    const clock = new ManualClock();
    const now = clock.now();
    clock.advance(LEASE_MS);
    const deps = { clock, config: { leaseMs: LEASE_MS } as never, cluster: null };
    const late = lateClaims([claimed('a', 0, now), claimed('b', 1, now)], undefined, entries, deps, now);
    expect(late.map((t) => t.id)).to.deep.equal(['a', 'b']);
  });

  it('drops the attempts of a partition whose epoch is no longer held (revoked or granted again)', () => {
    const { fences, late } = claimSent();
    fences.revoke(0);
    fences.grant(1, 4);
    expect(late(['a', 'b'])).to.deep.equal(['a']);
    fences.grant(0, 7); // lost and won again: a new epoch, and the old claim's attempt is still not started
    expect(late(['a'])).to.deep.equal(['a']);
  });

  it('starts the attempts of a partition given up by hand-over with the epoch claimed, not after a loss or a new grant', () => {
    const { fences, late } = claimSent();
    fences.revoke(0, true); // rendezvous gave partition 0 to a joining member
    fences.revoke(1); // partition 1 was lost (lease expired)
    expect(late(['a', 'b'])).to.deep.equal(['b']);
    expect(fences.tokensFor([0, 1])).to.deep.equal([-1, -1]); // nothing more of either is claimed
    expect(fences.mayStart(0)).to.equal(true);
    expect(fences.mayStart(1)).to.equal(false);
    fences.grant(0, 7); // given up, then won again: the old claim's epoch no longer starts anything
    expect(late(['a'])).to.deep.equal(['a']);
    fences.revoke(0); // and a loss after that forgets the hand-over
    expect(fences.mayStart(0)).to.equal(false);
  });

  it('still drops a handed-over claim answered after its attempt lease ended', () => {
    const { clock, fences, late } = claimSent();
    fences.revoke(0, true);
    clock.advance(LEASE_MS);
    expect(late(['a'])).to.deep.equal(['a']);
  });
});
