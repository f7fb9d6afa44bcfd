import { MinHeap } from './min-heap';
import type { DueEntry } from './task';

/**
 * Ready entries set aside per concurrency key while their key is full: one heap per key in the
 * ready queues' order, so the entry that would have started first comes back first. Keys with
 * nothing set aside hold no state.
 */
export class KeySetAside {
  private readonly byKey = new Map<string, MinHeap<DueEntry>>();
  private count = 0;

  /** @param order the order entries come back in (the ready queues' order inside a tenant) */
  constructor(private readonly order: (a: DueEntry, b: DueEntry) => number) {}

  /** Entries set aside over every key. */
  get size(): number {
    return this.count;
  }

  /** Entries set aside on `key`. */
  sizeOf(key: string): number {
    return this.byKey.get(key)?.size ?? 0;
  }

  add(key: string, e: DueEntry): void {
    let heap = this.byKey.get(key);
    if (!heap) {
      heap = new MinHeap(this.order);
      this.byKey.set(key, heap);
    }
    heap.push(e);
    this.count++;
  }

  /** Removes and returns up to `n` entries of `key`, best first. */
  take(key: string, n: number): DueEntry[] {
    const heap = this.byKey.get(key);
    if (!heap) return [];
    const out: DueEntry[] = [];
    while (out.length < n && heap.size > 0) out.push(heap.pop() as DueEntry);
    this.count -= out.length;
    if (heap.size === 0) this.byKey.delete(key);
    return out;
  }
}
