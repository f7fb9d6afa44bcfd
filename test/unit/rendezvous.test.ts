import { expect } from 'chai';
import { partitionsFor, rendezvousAssignment } from '../../src/domain/rendezvous';

function counts(assignment: Array<string | null>): Map<string, number> {
  const m = new Map<string, number>();
  for (const o of assignment) if (o !== null) m.set(o, (m.get(o) ?? 0) + 1);
  return m;
}

describe('rendezvous hashing with bounded loads (HRW, Thaler & Ravishankar 1998; Mirrokni et al. 2018)', () => {
  const three = ['node-a-1234-x1', 'node-b-5678-y2', 'node-c-9012-z3'];

  it('every share is ⌊P / n⌋ or ⌈P / n⌉: 12 over 3 is 4 / 4 / 4 (plain HRW gave 5 / 3 / 4), 64 over 3 is 21 or 22', () => {
    const c12 = counts(rendezvousAssignment(['member-0', 'member-1', 'member-2'], 12));
    expect([...c12.values()]).to.deep.equal([4, 4, 4]);
    const c = counts(rendezvousAssignment(three, 64));
    expect([...c.keys()].sort()).to.deep.equal([...three].sort());
    for (const n of c.values()) expect(n).to.be.oneOf([21, 22]);
  });

  it('is exactly balanced over many member sets and partition counts, fewer partitions than members included', () => {
    for (let t = 0; t < 120; t++) {
      const n = 1 + (t % 9);
      const P = [1, 5, 12, 16, 64, 4096][t % 6];
      const members = Array.from({ length: n }, (_, i) => `host-${t}-${i}-${(i * 2654435761 + t) % 100000}`);
      const assignment = rendezvousAssignment(members, P);
      expect(assignment.every((o) => o !== null)).to.equal(true);
      const c = counts(assignment);
      const shares = members.map((m) => c.get(m) ?? 0);
      expect(shares.reduce((s, x) => s + x, 0)).to.equal(P);
      for (const share of shares) expect(share).to.be.oneOf([Math.floor(P / n), Math.ceil(P / n)]);
    }
  });

  it('does not depend on the order or repetition of the member list', () => {
    expect(rendezvousAssignment(three, 64)).to.deep.equal(rendezvousAssignment([three[2], three[0], three[1], three[0]], 64));
  });

  it('a joining member takes its share from the others, and few other partitions move', () => {
    const before = rendezvousAssignment(three, 64);
    const after = rendezvousAssignment([...three, 'node-d-3456-w4'], 64);
    let moved = 0;
    for (let p = 0; p < 64; p++) if (before[p] !== after[p]) moved++;
    expect(counts(after).get('node-d-3456-w4')).to.equal(16);
    // 16 must move to the new member; the bound pushes at most as many again between the old ones
    expect(moved).to.be.within(16, 32);
  });

  it('over many member sets a join moves at most twice the share it must take', () => {
    for (let t = 0; t < 200; t++) {
      const n = 2 + (t % 7);
      const P = [12, 16, 64, 128][t % 4];
      const members = Array.from({ length: n }, (_, i) => `h${t}-${i}-${(i * 7919 + t) % 1000}`);
      const before = rendezvousAssignment(members, P);
      const after = rendezvousAssignment([...members, `new-${t}`], P);
      let moved = 0;
      for (let p = 0; p < P; p++) if (before[p] !== after[p]) moved++;
      expect(moved).to.be.at.most(2 * Math.ceil(P / (n + 1)));
    }
  });

  it('a leaving member hands out its own partitions; the others keep nearly all of theirs', () => {
    const before = rendezvousAssignment(three, 64);
    const after = rendezvousAssignment([three[0], three[2]], 64);
    let kept = 0;
    let others = 0;
    for (let p = 0; p < 64; p++) {
      expect(after[p]).to.be.oneOf([three[0], three[2]]);
      if (before[p] !== three[1]) {
        others++;
        if (after[p] === before[p]) kept++;
      }
    }
    expect(others - kept).to.be.at.most(4);
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
