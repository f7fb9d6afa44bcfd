import { randomBytes } from 'node:crypto';

/**
 * A UUID version 7 (RFC 9562 §5.7): 48 bits of Unix time in milliseconds, then random bits.
 * Ids made close in time sort close together, so the store's id index and the attempt history
 * grow at their right edge instead of touching random pages on every write (measured: the write
 * path dominated by random B-tree pages with v4 ids). The partition hash spreads them evenly still.
 * @param nowMs time of creation (epoch ms) from the injected clock
 * @param random source of 10 random bytes (injectable for tests)
 */
export function uuidv7(nowMs: number, random: (size: number) => Uint8Array = randomBytes): string {
  const b = new Uint8Array(16);
  let ts = Math.max(0, Math.floor(nowMs));
  for (let i = 5; i >= 0; i--) {
    b[i] = ts % 256;
    ts = Math.floor(ts / 256);
  }
  b.set(random(10), 6);
  b[6] = 0x70 | (b[6] & 0x0f); // version 7
  b[8] = 0x80 | (b[8] & 0x3f); // variant 10
  const hex = Buffer.from(b).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
