import { expect } from 'chai';
import { partitionsFor, rendezvousAssignment } from '../../src/domain/rendezvous';

function counts(assignment: Array<string | null>): Map<string, number> {
  const m = new Map<string, number>();
  for (const o of assignment) if (o !== null) m.set(o, (m.get(o) ?? 0) + 1);
  return m;
}

describe('rendezvous hashing (HRW, Thaler & Ravishankar 1998)', () => {
  const three = ['node-a-1234-x1', 'node-b-5678-y2', 'node-c-9012-z3'];

  it('spreads 64 partitions over 3 members within ±30 % of 64/3', () => {
    const c = counts(rendezvousAssignment(three, 64));
    expect([...c.keys()].sort()).to.deep.equal([...three].sort());
    for (const n of c.values()) expect(n).to.be.within(Math.ceil((64 / 3) * 0.7), Math.floor((64 / 3) * 1.3));
  });

  it('is even over many member sets (hostname-pid-random style ids): worst share within ±30 % for 4096 partitions / 8 members', () => {
    const members = Array.from({ length: 8 }, (_, i) => `host-${i}-${1000 + i * 7}-${(i * 2654435761) % 100000}`);
    const c = counts(rendezvousAssignment(members, 4096));
    for (const n of c.values()) expect(n).to.be.within(512 * 0.7, 512 * 1.3);
  });

  it('does not depend on the order or repetition of the member list', () => {
    expect(rendezvousAssignment(three, 64)).to.deep.equal(rendezvousAssignment([three[2], three[0], three[1], three[0]], 64));
  });

  it('a joining member takes partitions only from others, and only those it now owns move', () => {
    const before = rendezvousAssignment(three, 64);
    const after = rendezvousAssignment([...three, 'node-d-3456-w4'], 64);
    let moved = 0;
    for (let p = 0; p < 64; p++) {
      if (before[p] !== after[p]) {
        moved++;
        expect(after[p]).to.equal('node-d-3456-w4');
      }
    }
    // about 64 / 4 = 16 move; none between the old members
    expect(moved).to.be.within(8, 24);
  });

  it('a leaving member hands out only its own partitions; the others keep theirs', () => {
    const before = rendezvousAssignment(three, 64);
    const after = rendezvousAssignment([three[0], three[2]], 64);
    for (let p = 0; p < 64; p++) {
      if (before[p] !== three[1]) expect(after[p]).to.equal(before[p]);
      else expect(after[p]).to.be.oneOf([three[0], three[2]]);
    }
  });

  it('no members: nobody owns anything; one member owns everything', () => {
    expect(rendezvousAssignment([], 4)).to.deep.equal([null, null, null, null]);
    expect(partitionsFor('solo', [], 5)).to.deep.equal([0, 1, 2, 3, 4]);
  });

  it('partitionsFor counts the caller as live and agrees with the assignment', () => {
    const mine = partitionsFor(three[0], [three[1], three[2]], 64);
    const assignment = rendezvousAssignment(three, 64);
    expect(mine).to.deep.equal(assignment.flatMap((o, p) => (o === three[0] ? [p] : [])));
  });
});
