/**
 * 003: `members.bus`, the bus each member sends and hears its peers on (`redis`, `postgres`,
 * `none`), written by its heartbeat, so that members started with different buses (one with
 * `REDIS_URL`, one without) see it and say so (docs/CLUSTER.md "One bus for every member"). Rows
 * written before have NULL: not said. Adding a nullable column rewrites no rows.
 */
export const up = `
ALTER TABLE members ADD COLUMN bus text;
`;
