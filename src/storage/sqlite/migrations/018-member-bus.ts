/**
 * 018: `members.bus`, the bus each member sends and hears its peers on, written by its heartbeat
 * (the PostgreSQL store's migration 003 says why). Rows written before have NULL: not said.
 * Adding a nullable column rewrites no rows.
 */
export const up = `
ALTER TABLE members ADD COLUMN bus TEXT;
`;
