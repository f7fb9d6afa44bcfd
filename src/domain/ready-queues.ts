import { MinHeap } from './min-heap';
import { SmoothWeightedRoundRobin } from './smooth-weighted-round-robin';
import { DueEntry, PRIORITY_RANK } from './task';

/** Inside a tenant: high before medium before low, then oldest due first, then submission order. */
export function compareReady(a: DueEntry, b: DueEntry): number {
  return PRIORITY_RANK[a.priority] - PRIORITY_RANK[b.priority] || a.dueAt - b.dueAt || a.seq - b.seq;
}

/**
 * The dispatcher's ready tasks (DESIGN §5): one priority queue per tenant, and smooth weighted
 * round-robin between the tenants that have ready work. Tenants without work hold no state.
 */
export class ReadyQueues {
  private byTenant = new Map<string, MinHeap<DueEntry>>();
  private ids = new Set<string>();
  private rr: SmoothWeightedRoundRobin;

  /** @param weightOf tenant weight (> 0, default 1) */
  constructor(weightOf?: (tenantId: string) => number) {
    this.rr = new SmoothWeightedRoundRobin(weightOf);
  }

  get size(): number {
    return this.ids.size;
  }

  /** Adds an entry; a second add of the same id is ignored. */
  add(entry: DueEntry): void {
    if (this.ids.has(entry.id)) return;
    this.ids.add(entry.id);
    let q = this.byTenant.get(entry.tenantId);
    if (!q) {
      q = new MinHeap(compareReady);
      this.byTenant.set(entry.tenantId, q);
    }
    q.push(entry);
  }

  /** Removes and returns up to `n` entries, tenant by tenant in weighted turn. */
  take(n: number): DueEntry[] {
    const out: DueEntry[] = [];
    while (out.length < n && this.byTenant.size > 0) {
      const tenant = this.rr.pick(this.byTenant.keys()) as string;
      const q = this.byTenant.get(tenant) as MinHeap<DueEntry>;
      const e = q.pop() as DueEntry;
      out.push(e);
      this.ids.delete(e.id);
      if (q.size === 0) {
        this.byTenant.delete(tenant);
        this.rr.forget(tenant);
      }
    }
    return out;
  }
}
