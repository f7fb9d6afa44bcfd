import { DueEntry } from '../../../src/domain/task';

/** Deterministic PRNG (mulberry32) so property-style tests are reproducible. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let seqCounter = 0;

/** A DueEntry with sensible defaults; override what the test cares about. */
export function dueEntry(overrides: Partial<DueEntry> & { id: string }): DueEntry {
  seqCounter += 1;
  return {
    partition: 0,
    seq: seqCounter,
    dueAt: 0,
    priority: 'medium',
    tenantId: 'tenant-a',
    taskType: 'noop',
    state: 'PENDING',
    ...overrides,
  };
}
