import { isIP } from 'node:net';
import type { Config } from '../config';
import { ConfigError } from '../config';

/** True for a host name or address that only this machine reaches (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1') return true;
  return isIP(h) === 4 && h.startsWith('127.');
}

/**
 * Refuses to serve an open API (no `apiKeys`) on a non-loopback `HOST`, unless
 * `ALLOW_UNAUTHENTICATED=true` says so on purpose (docs/TENANTS.md).
 * @throws ConfigError naming HOST, apiKeys and ALLOW_UNAUTHENTICATED
 */
export function assertSafeExposure(config: Pick<Config, 'host' | 'apiKeys' | 'allowUnauthenticated'>): void {
  if (config.apiKeys.length > 0 || config.allowUnauthenticated || isLoopback(config.host)) return;
  throw new ConfigError(
    `invalid configuration: host (env HOST) "${config.host}" is reachable from other machines but no apiKeys are configured; ` +
      'configure apiKeys, or set ALLOW_UNAUTHENTICATED=true to serve without authentication',
  );
}
