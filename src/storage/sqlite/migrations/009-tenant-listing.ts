/**
 * 009: a tenant's tasks newest first (`GET /api/v1/tasks` with a tenant's key, or `?tenant=`).
 * Without it the listing scans the table from its newest row until it has a page of the tenant's
 * tasks: a tenant with few tasks in a store of millions costs a scan of all of them on the event
 * loop (measured: 62 ms at 500,000 rows). Inserts add one entry at the tenant's right edge.
 */
export const up = `
CREATE INDEX tasks_tenant_seq ON tasks (tenant_id, seq);
`;
