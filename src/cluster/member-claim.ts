import { randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock';
import { StartupError } from '../domain/startup-error';
import type { ClusterStore, MemberRecord } from '../storage/cluster-store';

/** A fresh process instance token (16 hex digits): tells two processes with one member id apart. */
export function newInstanceToken(): string {
  return randomBytes(8).toString('hex');
}

/**
 * Start-up refused: another live process holds this member id (its record keeps being
 * heartbeated by another instance). `main` prints the one-line message and exits 78.
 */
export class MemberIdInUseError extends StartupError {
  constructor(
    readonly memberId: string,
    readonly holder: MemberRecord,
  ) {
    super(
      `member id "${memberId}" is held by another live process (address ${holder.address ?? 'unknown'}, instance ${holder.instance}); ` +
        'stop that process first or give this one another MEMBER_ID',
    );
  }
}

export interface MemberClaim {
  store: Pick<ClusterStore, 'heartbeatMember'>;
  clock: Clock;
  memberId: string;
  /** This process's token ({@link newInstanceToken}). */
  instance: string;
  address: string | null;
  /** Member TTL (ms): `leaseTtlMs`. The holder heartbeats every third of it. */
  ttlMs: number;
  log?: { info(obj: object, msg: string): void };
}

/**
 * Takes the member id for this process before it runs anything: heartbeats its record with this
 * process's instance token. When another instance's record is live, watches it (every ttl/6,
 * on the injected clock) until either its heartbeat moves on, so a live process holds the id:
 * {@link MemberIdInUseError}; or it expires unrenewed, so its process is gone (a crash, then a
 * restart with the same id): the id is taken. So a duplicate is refused within about a third of
 * the TTL, and a restart after a crash waits at most one TTL.
 * @throws MemberIdInUseError as above; the store's error when a heartbeat fails
 */
export async function claimMember(o: MemberClaim): Promise<void> {
  const { store, clock, memberId, instance, address, ttlMs } = o;
  let seen: MemberRecord | null = null;
  for (;;) {
    const beat = await store.heartbeatMember({ memberId, address, instance }, clock.now(), ttlMs);
    if (beat.held) return;
    const h = beat.holder;
    if (seen && (h.instance !== seen.instance || h.heartbeatAt !== seen.heartbeatAt)) throw new MemberIdInUseError(memberId, h);
    if (!seen)
      o.log?.info({ member_id: memberId, holder: h.instance }, 'member id held by another instance: waiting to see whether it is alive');
    seen = h;
    const wait = Math.max(1, Math.min(Math.floor(ttlMs / 6), h.expiresAt - clock.now()));
    await new Promise<void>((resolve) => clock.setTimeout(resolve, wait));
  }
}
