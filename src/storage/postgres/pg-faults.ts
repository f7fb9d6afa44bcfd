/**
 * Which PostgreSQL errors mean "the database is away" (a recoverable `connection_lost` fault: the
 * caller gets 503 `STORE_UNAVAILABLE` and may retry), "the database takes no writes now" (a
 * recoverable `read_only` fault: a hot standby, a primary demoted by a failover, or
 * `default_transaction_read_only` on), and which mean "retry the transaction" (a deadlock or
 * serialization failure between nodes). Codes: PostgreSQL's Appendix A, "Error Codes".
 */
import { StoreContendedError } from '../../domain/errors';
import type { StoreFault } from '../store-health';

/** Node's socket errors of a server that is down, unreachable or gone mid-call. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * read_only_sql_transaction: a write on a hot standby (a failover that left the URL on the old
 * primary, now a replica) or under `default_transaction_read_only = on`. Recoverable: the next
 * committed write (a lease renewal, every few seconds) ends it, as for a full disk; a `SELECT 1`
 * says nothing about it.
 */
const READ_ONLY = '25006';

/** SQLSTATE classes and codes of a server that cannot take work now. */
function isServerAway(code: string): boolean {
  return (
    code.startsWith('08') || // connection exception
    code === '57P01' || // admin_shutdown
    code === '57P02' || // crash_shutdown
    code === '57P03' || // cannot_connect_now (starting up, shutting down, recovery)
    code === '53300' || // too_many_connections
    code === '53100' || // disk_full
    code === '58030' || // io_error
    code === '25P03' || // idle_in_transaction_session_timeout: the server ended the session
    code === '57014' || // query_canceled: the statement timeout (a server too slow now), or a cancel
    code === READ_ONLY
  );
}

/**
 * The message of a connection the driver or server ended, or that stopped answering (pg gives
 * these no code): `Query read timeout` is the driver's `query_timeout` on a connection that holds
 * a statement without an answer (a half-open socket, a frozen server); `timeout expired` is a
 * client's own connect timeout (outside a pool, which says `connection timeout`).
 */
const ENDED =
  /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Query read timeout|timeout expired/i;

/** The `connection_lost` (`disk_full`, `read_only`) fault `err` reveals, or null for any other error. @param now epoch ms */
export function postgresFaultOf(err: unknown, target: string, now: number): StoreFault | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : String(err);
  // FATAL: the server ended the session (an expired password at a reconnect, a terminated backend).
  const fatal = (e as { severity?: unknown } | null)?.severity === 'FATAL';
  const away = SOCKET_CODES.has(code) || isServerAway(code) || fatal || (code === '' && ENDED.test(message));
  if (!away) return null;
  const kind = code === '53100' ? 'disk_full' : code === READ_ONLY ? 'read_only' : 'connection_lost';
  return { kind, target, cause: code ? `${code}: ${message}` : message, recoverable: true, since: now };
}

/**
 * The `tables_missing` fault `err` reveals, or null for any other error: a statement of the running
 * store found none of its tables (42P01 undefined_table, 3F000 invalid_schema_name), so the schema
 * was dropped, or the database dropped and made again empty, under the service. Not recoverable:
 * what was acknowledged is not in that database, and a restart would migrate an empty store there
 * and carry on as if new, so the service stays unready until its operator restores the database
 * (docs/OPERATIONS.md "Store faults"). Codes: Appendix A.
 * @param now epoch ms
 */
export function postgresTablesFaultOf(err: unknown, target: string, now: number): StoreFault | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code !== '42P01' && e?.code !== '3F000') return null;
  const message = typeof e.message === 'string' ? e.message : String(err);
  return { kind: 'tables_missing', target, cause: `${e.code}: ${message}`, recoverable: false, since: now };
}

/**
 * The relation a 42P01 ("relation \"tasks\" does not exist") names, or null (another error, or a
 * message in another shape or language).
 */
export function missingRelationOf(err: unknown): string | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code !== '42P01' || typeof e.message !== 'string') return null;
  return /relation "(?:[^".]+\.)?([^"]+)" does not exist/.exec(e.message)?.[1] ?? null;
}

/**
 * The fault of a 42P01 whose relation is still in the store's schema (the catalogs say so): the
 * role can no longer see it, as when `USAGE` on the schema was revoked (the search path then
 * skips the schema). Like {@link postgresPrivilegeFaultOf}, `permission_denied` and recoverable:
 * the next committed write ends it once the privilege is back, with no restart. Before, it was
 * `tables_missing` and only a restart ended it; completions kept in memory were lost at that
 * stop and their tasks ran again.
 * @param now epoch ms
 */
export function hiddenTablesFaultOf(err: unknown, target: string, schema: string, now: number): StoreFault {
  const message = (err as { message?: unknown } | null)?.message;
  const cause = `42P01: ${typeof message === 'string' ? message : String(err)} (it exists in schema ${schema}: the role cannot reach it; USAGE on the schema revoked?)`;
  return { kind: 'permission_denied', target, cause, recoverable: true, since: now };
}

/**
 * The `permission_denied` fault `err` reveals, or null for any other error: a statement of the
 * running store refused for a privilege its role lacks (42501 insufficient_privilege: a `REVOKE`
 * under the service, a role narrowed by mistake). Recoverable: the next committed write ends it
 * once the privilege is granted back. Not a lost connection: the other writes of its batch run
 * again without it (write-queue.ts), so a write that keeps its privileges still goes through. At
 * start-up the same error is a configuration error ({@link postgresConfigProblem}).
 * @param now epoch ms
 */
export function postgresPrivilegeFaultOf(err: unknown, target: string, now: number): StoreFault | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code !== '42501') return null;
  const message = typeof e.message === 'string' ? e.message : String(err);
  return { kind: 'permission_denied', target, cause: `42501: ${message}`, recoverable: true, since: now };
}

/**
 * What an error at start-up says about the configuration, as one line naming `POSTGRES_URL`, or
 * null when it is not about the configuration: a wrong password or role (28P01, 28000), a database
 * that does not exist (3D000), a privilege the role lacks (42501). Codes: Appendix A.
 */
export function postgresConfigProblem(err: unknown, target: string): string | null {
  const e = err as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  const where = `invalid configuration: postgresUrl (env POSTGRES_URL): ${target}`;
  switch (e?.code) {
    case '28P01':
    case '28000':
      return `${where}: ${message} (check the user and password in the URL, and pg_hba.conf)`;
    case '3D000':
      return `${where}: ${message} (create it first, e.g. createdb; the store creates its tables, not the database)`;
    case '42501':
      return `${where}: ${message} (the role needs CONNECT on the database and, to migrate, CREATE on it or on the schema: docs/POSTGRES.md)`;
    default:
      return null;
  }
}

/** pg-pool's error for a call that waited its connect timeout for a connection (a full pool, or a server not accepting). */
const POOL_WAIT = /timeout exceeded when trying to connect/i;

/**
 * True when `err` is a call timing out, as calls do when the server answers but holds them (a
 * lock on the store's tables): the statement timeout (57014), the driver's read timeout, or a
 * wait for a pooled connection. Also what a server away gives; the connection watch's own probe
 * tells the two apart.
 */
export function isStallSymptom(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (e?.code === '57014') return true;
  return typeof e?.message === 'string' && (POOL_WAIT.test(e.message) || /Query read timeout/i.test(e.message));
}

/** True when `err` is pg-pool's timeout of a call that waited for a connection. */
export function isPoolWaitTimeout(err: unknown): boolean {
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && POOL_WAIT.test(message);
}

/** True for errors after which the same transaction may simply run again: deadlock, serialization failure. */
export function isRetryableConflict(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * The typed 503 (`STORE_CONTENDED`) of a transaction the server refused for concurrent ones
 * (`err`, a 40001 or 40P01) on each of its `tries`: nothing was stored. Given to callers in
 * place of the raw driver error, which became a 500.
 */
export function storeContendedOf(err: unknown, tries: number): StoreContendedError {
  const e = err as { code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === 'string' ? e.message : String(err);
  return new StoreContendedError(`${String(e?.code)}: ${message}`, tries);
}
