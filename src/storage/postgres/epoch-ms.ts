/**
 * Times as the PostgreSQL store writes them: whole epoch milliseconds (`bigint` columns). The
 * scheduler's clock may read fractional milliseconds (with Redis, the local clock plus a measured
 * offset: src/cluster/redis/offset-clock.ts), which a `bigint` parameter refuses. An operation
 * passes every time it binds through one of these:
 * - {@link atMs} for an instant compared with stored times or stored as "when" (`now`, `at`):
 *   rounded down, which changes no comparison with a stored whole millisecond
 *   (`stored <= now` ⟺ `stored <= floor(now)`, `stored > now` ⟺ `stored > floor(now)`);
 * - {@link untilMs} for an expiry (`now + ttlMs`): rounded up, so a lease or record never ends
 *   before the caller reckons it does.
 */

/** `t` (epoch ms) rounded down to a whole millisecond. */
export function atMs(t: number): number {
  return Math.floor(t);
}

/** `t` (epoch ms) rounded up to a whole millisecond. */
export function untilMs(t: number): number {
  return Math.ceil(t);
}
