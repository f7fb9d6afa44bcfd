/**
 * Rendezvous (highest random weight, HRW) hashing with bounded loads: which live member should
 * own each partition.
 *
 * Every member scores every partition with a pseudo-random weight `w(member, partition)`. Plain
 * HRW gives each partition to its highest-weight member (D. G. Thaler and C. V. Ravishankar,
 * "Using name-based mappings to increase hit rates", IEEE/ACM Transactions on Networking 6(1),
 * 1998). That spreads partitions evenly only in expectation: 12 partitions over 3 members came
 * out 5 / 3 / 4, so with the same worker slots on every node the node with 5 set the pace and
 * three nodes ran 1.85–1.96× one node's I/O-bound tasks, not 3× (load-tests/README.md, issue 32).
 * So the loads are bounded, after V. Mirrokni, M. Thorup and M. Zadimoghaddam, "Consistent
 * Hashing with Bounded Loads", SODA 2018: every (member, partition) pair is taken in descending
 * weight order (ties to the smaller member id, then the smaller partition), and a partition goes
 * to the pair's member unless it already has one or that member is full. A member is full at
 * ⌈P / n⌉ partitions, and at ⌊P / n⌋ once P mod n members have reached ⌈P / n⌉; the capacities
 * add up to P, so every partition is assigned and every share is ⌊P / n⌋ or ⌈P / n⌉.
 *
 * Properties the ownership component relies on: every node that sees the same member set computes
 * the same assignment with no coordination (a pure function of the set); shares differ by at most
 * one; and a partition stays with its highest-weight member unless that member is full, so a join
 * or a leave moves about the partitions that must move (P / (n + 1) on a join), plus a few that
 * the bound pushes to a neighbour (the tests bound both).
 *
 * Pure: no I/O, no clock.
 */

/** FNV-1a (32-bit) of a string. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's 32-bit finaliser: every input bit affects every output bit. */
function fmix32(x: number): number {
  let h = x >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The HRW weight of `partition` for a member whose id hashes to `memberHash` (unsigned 32-bit).
 * Two rounds of mixing so that neighbouring partitions get unrelated weights.
 */
function weight(memberHash: number, partition: number): number {
  return fmix32(fmix32(memberHash ^ Math.imul(partition + 1, 0x9e3779b9)) ^ memberHash);
}

/**
 * The member that should own each partition (bounded-load HRW, see the file header).
 * @param members live member ids (order and duplicates do not matter)
 * @param partitions partition count P (≥ 0)
 * @returns an array of length P: the owner's id of each partition, or null for all when there
 * are no members; each member owns ⌊P / n⌋ or ⌈P / n⌉ of them
 */
export function rendezvousAssignment(members: readonly string[], partitions: number): Array<string | null> {
  const ids = [...new Set(members)].sort();
  const out = new Array<string | null>(partitions).fill(null);
  const n = ids.length;
  if (n === 0) return out;
  const hashes = ids.map(fnv1a);
  const pairs: Array<{ w: number; m: number; p: number }> = [];
  for (let p = 0; p < partitions; p++) for (let m = 0; m < n; m++) pairs.push({ w: weight(hashes[m], p), m, p });
  pairs.sort((a, b) => b.w - a.w || a.m - b.m || a.p - b.p);
  const floor = Math.floor(partitions / n);
  let ceilingsLeft = partitions % n;
  const load = new Array<number>(n).fill(0);
  for (const { m, p } of pairs) {
    if (out[p] !== null) continue;
    const cap = ceilingsLeft > 0 ? floor + 1 : floor;
    if (load[m] >= cap) continue;
    out[p] = ids[m];
    load[m]++;
    if (load[m] === floor + 1) ceilingsLeft--;
  }
  return out;
}

/**
 * The partitions `member` should own among `members` (it is counted as live even when missing
 * from the list: a node always includes itself).
 * @returns partition numbers in ascending order
 */
export function partitionsFor(member: string, members: readonly string[], partitions: number): number[] {
  const assignment = rendezvousAssignment([...members, member], partitions);
  const mine: number[] = [];
  assignment.forEach((owner, p) => {
    if (owner === member) mine.push(p);
  });
  return mine;
}
