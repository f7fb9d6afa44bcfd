import type { BusKind } from './bus-kind';

/** Where the check reports to. */
export interface BusAgreementSinks {
  log?: { warn(obj: object, msg: string): void; info?(obj: object, msg: string): void };
  /** How many live members are on another bus than this one. */
  gauge?(members: number): void;
}

/**
 * Compares the buses the live members recorded with this member's, at every lease round
 * (`partition-leases.ts`). A member on another bus (one started with `REDIS_URL` beside one
 * without, as in a rolling change that adds Redis) misses this member's wake-ups, cancels and
 * pull demands and this one misses its: tasks wait for their owner's next window read, a cancel
 * for the attempt's end, a pull worker for another member. That is logged once per change of
 * the set of such members (a warning; an info line when they agree again) and counted in a gauge.
 * Records that say no bus (null: written before buses were recorded) are left out.
 */
export class BusAgreement {
  private reported = '';

  constructor(
    private readonly memberId: string,
    private readonly own: BusKind,
    private readonly sinks: BusAgreementSinks,
  ) {}

  /**
   * @param live the live members as the store listed them (this one may be among them)
   * @returns the members on another bus, as `member_id=bus`, by member id
   */
  see(live: ReadonlyArray<{ memberId: string; bus: string | null }>): string[] {
    const others = live
      .filter((m) => m.memberId !== this.memberId && m.bus !== null && m.bus !== this.own)
      .map((m) => `${m.memberId}=${m.bus}`)
      .sort();
    this.sinks.gauge?.(others.length);
    const key = others.join(',');
    if (key === this.reported) return others;
    this.reported = key;
    if (others.length > 0) {
      this.sinks.log?.warn(
        { member_id: this.memberId, bus: this.own, other_buses: others },
        'members of this cluster use another bus: they do not hear one another (wake-ups, cancels, pull demands); give every member the same REDIS_URL (or none)',
      );
    } else {
      this.sinks.log?.info?.({ member_id: this.memberId, bus: this.own }, 'every live member uses this bus again');
    }
    return others;
  }
}
