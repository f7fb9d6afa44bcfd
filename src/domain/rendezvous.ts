/**
 * Rendezvous (highest random weight, HRW) hashing: which live member should own each partition.
 *
 * Every member scores every partition with a pseudo-random weight `w(member, partition)`; the
 * partition goes to the member with the highest weight (ties, practically impossible, to the
 * smaller member id). Source: D. G. Thaler and C. V. Ravishankar, "Using name-based mappings to
 * increase hit rates", IEEE/ACM Transactions on Networking 6(1), 1998.
 *
 * Properties the ownership component relies on: every node that sees the same member set computes
 * the same assignment with no coordination; partitions spread evenly in expectation (each member
 * gets about P / n); and when a member joins or leaves, only the partitions it gains or loses
 * move (a join takes about P / (n + 1) partitions, all from others; a leave hands out only its
 * own), the minimal movement possible.
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
 * The member that should own each partition.
 * @param members live member ids (order and duplicates do not matter)
 * @param partitions partition count P (≥ 0)
 * @returns an array of length P: the owner's id of each partition, or null for all when there
 * are no members
 */
export function rendezvousAssignment(members: readonly string[], partitions: number): Array<string | null> {
  const ids = [...new Set(members)].sort();
  const hashes = ids.map(fnv1a);
  const out = new Array<string | null>(partitions).fill(null);
  for (let p = 0; p < partitions; p++) {
    let best = -1;
    let bestWeight = -1;
    for (let i = 0; i < ids.length; i++) {
      const w = weight(hashes[i], p);
      if (w > bestWeight) {
        best = i;
        bestWeight = w;
      }
    }
    if (best >= 0) out[p] = ids[best];
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
