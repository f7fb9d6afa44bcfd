/** The label value for tenants beyond the bound. */
export const OTHER_TENANTS = '_other';

/**
 * Bounded label values for per-tenant metrics: the first `max` tenants seen get their own label,
 * later ones share {@link OTHER_TENANTS}, so a tenant count in the thousands cannot blow up the
 * time-series count (Prometheus' guidance on label cardinality).
 */
export class TenantLabels {
  private readonly known = new Set<string>();

  /** @param max distinct tenant labels (≥ 0) */
  constructor(private readonly max: number) {}

  of(tenantId: string): string {
    if (this.known.has(tenantId)) return tenantId;
    if (this.known.size >= this.max) return OTHER_TENANTS;
    this.known.add(tenantId);
    return tenantId;
  }
}
