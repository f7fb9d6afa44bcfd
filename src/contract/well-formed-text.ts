/**
 * The pattern of every name, key and id the stores keep as text (task types, queues, idempotency
 * keys, correlation ids, workflow names and workflow-local ids, cron names and expressions, pull
 * workers' ids, error types), and of the ids and filters read back by them (path ids, list
 * filters): no lone UTF-16 surrogate and no U+0000.
 *
 * U+0000 (NUL, `"\u0000"` in JSON, `%00` in a URL): PostgreSQL's text cannot hold it (error 22021),
 * so it is refused on every store alike, where it was a 500 on PostgreSQL and a 404 or a stored
 * key on SQLite.
 *
 * JSON lets a string hold `\ud800`, half of a surrogate pair, on its own (RFC 8259 §8.2 calls such
 * strings' handling "unpredictable"). The stores keep text as UTF-8, which has no encoding for it:
 * SQLite and the PostgreSQL and MongoDB drivers write U+FFFD in its place, so two distinct keys
 * (`"\ud800"`, `"\udfff"`) would be stored as one and read back as neither. Payloads, results and
 * metadata are stored as JSON text, escapes kept, and are not held to this. Ajv compiles patterns
 * with the `u` flag (its `unicodeRegExp` default), under which a well-formed pair is one code point
 * outside the class below and a lone surrogate is one inside it.
 */
export const WELL_FORMED_TEXT = '^[^\\u0000\\uD800-\\uDFFF]*$';

/** The validation error's reason when a string breaks {@link WELL_FORMED_TEXT}. */
export const WELL_FORMED_TEXT_REASON =
  'must not contain U+0000 (NUL) or a lone UTF-16 surrogate (a \\uD800–\\uDFFF escape without its pair)';
