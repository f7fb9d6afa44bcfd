/**
 * 017: an index on `idempotency_keys.expires_at`, so the retention pass finds expired keys by a
 * range read instead of a scan of every key held (which, like the task scan fixed before it, ran
 * inside the writer's transaction once a minute and grew with the keys kept). The expiry of a new
 * key is `now` + the retention, so entries are appended at the index's end. PostgreSQL has had
 * the same index from its first migration (`idempotency_keys_expires`).
 */
export const up = `
CREATE INDEX idempotency_keys_expires ON idempotency_keys (expires_at);
`;
