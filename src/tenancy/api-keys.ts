import { createHash } from 'node:crypto';
import { Caller } from './caller';

/** One configured API key: its SHA-256 (hex; the key itself is never stored), tenant and role. */
export interface ApiKeyEntry {
  sha256: string;
  /** The tenant the key acts for (ignored for an admin key, which acts for every tenant). */
  tenant?: string;
  admin?: boolean;
  /** A label for logs. */
  name?: string;
}

/** SHA-256 of a key, hex (what `apiKeys[].sha256` holds; `node -e` one-liner in the README). */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/**
 * The configured API keys, looked up by hash: `Authorization: Bearer <key>` → the {@link Caller}.
 * A key is either an admin key or bound to one tenant.
 */
export class ApiKeys {
  private readonly byHash = new Map<string, Caller>();

  /** @throws Error for an entry that is neither admin nor bound to a tenant */
  constructor(entries: readonly ApiKeyEntry[]) {
    for (const e of entries) {
      if (!e.admin && !e.tenant) throw new Error(`apiKeys entry ${e.name ?? e.sha256.slice(0, 8)}: needs "tenant" or "admin": true`);
      this.byHash.set(e.sha256.toLowerCase(), e.admin ? { tenantId: null, admin: true } : { tenantId: e.tenant as string, admin: false });
    }
  }

  /** True when keys are configured (the API then requires one). */
  get enabled(): boolean {
    return this.byHash.size > 0;
  }

  /**
   * The caller of an `Authorization` header value, or null when it is missing, not `Bearer`, or
   * not a configured key.
   */
  authenticate(header: string | undefined): Caller | null {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    return m ? (this.byHash.get(hashApiKey(m[1])) ?? null) : null;
  }
}
