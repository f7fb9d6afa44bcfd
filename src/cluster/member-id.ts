import { randomBytes } from 'node:crypto';
import os from 'node:os';

/**
 * A member id for this process when none is configured: `<hostname>-<pid>-<6 hex digits>`. The
 * random part keeps two processes that reuse a pid (container restarts) apart, so a restarted
 * node never renews the leases of its previous life.
 */
export function defaultMemberId(): string {
  return `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
}
