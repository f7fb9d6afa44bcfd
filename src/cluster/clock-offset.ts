/**
 * Clock offset to a reference server, NTP style (RFC 5905 §8, simplified to one request/reply
 * with a single server timestamp): pure arithmetic over samples, no I/O.
 *
 * A sample is one reading of the server's clock (Redis `TIME`, PostgreSQL `clock_timestamp()`):
 * the local clock read just before sending (`sentAt`) and just after the reply (`receivedAt`), and
 * the server's time in the reply (`serverAt`); all epoch ms. The
 * server read its clock somewhere inside the round trip, so the true offset (server − local) lies
 * in `[serverAt − receivedAt, serverAt − sentAt]`: the midpoint is the estimate, half the round
 * trip its uncertainty.
 */
export interface OffsetSample {
  sentAt: number;
  serverAt: number;
  receivedAt: number;
}

/** What one sample says. */
export interface OffsetEstimate {
  /** Midpoint estimate of server − local (ms). */
  offsetMs: number;
  /** Round trip (ms, ≥ 0). */
  roundTripMs: number;
  /**
   * How far the offset may be off (ms): half the round trip, plus the local clock's resolution,
   * plus the drift allowance for the sample's age.
   */
  uncertaintyMs: number;
  /**
   * The correction to add to the local clock so that it never reads later than the server clock:
   * the offset minus its uncertainty, the low end of the interval. A task due at T on the server
   * clock then fires at T or up to one round trip (plus drift allowance) after, never before.
   */
  correctionMs: number;
}

/**
 * How fast two clocks may drift apart (15 ppm, NTP's PHI, RFC 5905 §7.2): an older sample is
 * trusted less by this much per ms of age.
 */
export const MAX_DRIFT = 15e-6;

/**
 * Resolution of the local clock (ms): `Date.now()` counts whole milliseconds, so a local reading
 * may be up to 1 ms behind the true local time; the servers' clocks have microseconds.
 */
export const LOCAL_RESOLUTION_MS = 1;

/**
 * The estimate of one sample, read at local time `now` (default: its reply time; a later `now`
 * widens the uncertainty by {@link MAX_DRIFT} × age). The uncertainty also counts the local
 * clock's resolution.
 * @throws RangeError for a sample whose reply came before its request
 */
export function estimate(s: OffsetSample, now: number = s.receivedAt): OffsetEstimate {
  const roundTripMs = s.receivedAt - s.sentAt;
  if (!(roundTripMs >= 0)) throw new RangeError(`sample received before it was sent (${s.sentAt} → ${s.receivedAt})`);
  const offsetMs = s.serverAt - (s.sentAt + s.receivedAt) / 2;
  const uncertaintyMs = roundTripMs / 2 + LOCAL_RESOLUTION_MS + Math.max(0, now - s.receivedAt) * MAX_DRIFT;
  return { offsetMs, roundTripMs, uncertaintyMs, correctionMs: offsetMs - uncertaintyMs };
}

/**
 * The sample to trust among `samples` at local time `now`: the one with the smallest uncertainty
 * (half round trip plus drift allowance), i.e. the fastest round trip unless it is much older:
 * NTP's clock filter. Samples with a negative round trip (the local clock stepped back during the
 * call) are ignored. Null when none is usable. `now` defaults to the latest reply time.
 */
export function bestSample(samples: readonly OffsetSample[], now?: number): OffsetSample | null {
  const usable = samples.filter((s) => s.receivedAt - s.sentAt >= 0);
  if (usable.length === 0) return null;
  const at = now ?? Math.max(...usable.map((s) => s.receivedAt));
  let best = usable[0];
  for (const s of usable) if (estimate(s, at).uncertaintyMs < estimate(best, at).uncertaintyMs) best = s;
  return best;
}

/**
 * The last `size` samples and the estimate of the best of them. Older samples leave the window,
 * so a drifting local clock is followed by re-measuring, and one slow round trip never replaces a
 * fast one still in the window.
 */
export class OffsetFilter {
  private readonly samples: OffsetSample[] = [];

  /** @param size samples kept (≥ 1; NTP keeps 8) */
  constructor(private readonly size = 8) {
    if (!(size >= 1)) throw new RangeError(`size must be ≥ 1, got ${size}`);
  }

  /** Adds a sample (an unusable one is dropped) and returns the current estimate. */
  add(sample: OffsetSample): OffsetEstimate | null {
    if (sample.receivedAt - sample.sentAt >= 0 && Number.isFinite(sample.serverAt)) {
      this.samples.push(sample);
      if (this.samples.length > this.size) this.samples.shift();
    }
    return this.current();
  }

  /**
   * The estimate of the best sample held at local time `now` (default: the latest reply), or null
   * before the first usable one.
   */
  current(now?: number): OffsetEstimate | null {
    const best = bestSample(this.samples, now);
    return best ? estimate(best, now ?? Math.max(...this.samples.map((s) => s.receivedAt))) : null;
  }
}
