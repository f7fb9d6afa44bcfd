import { expect } from 'chai';
import { uuidv7 } from '../../src/domain/task-id';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7 (RFC 9562 §5.7)', () => {
  it('puts the Unix time in ms in the first 48 bits, version 7 and variant 10', () => {
    const at = Date.UTC(2026, 10, 29, 12, 0, 0, 123);
    const id = uuidv7(at);
    expect(id).to.match(V7);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).to.equal(at);
  });

  it('keeps the random bits and the variant of the v4 UUID it is given', () => {
    expect(uuidv7(0x0123456789ab, '00000000-0000-4abc-9def-0123456789ab')).to.equal('01234567-89ab-7abc-9def-0123456789ab');
  });

  it('sorts ids of later milliseconds after earlier ones, and clamps times outside 48 bits', () => {
    const ids = [5, 1_000, 1_700_000_000_000, 1_700_000_000_001].map((t) => uuidv7(t));
    expect([...ids].sort()).to.deep.equal(ids);
    expect(uuidv7(-5).slice(0, 13)).to.equal('00000000-0000');
    expect(uuidv7(2 ** 60).slice(0, 13)).to.equal('ffffffff-ffff');
  });

  it('gives distinct ids within one millisecond', () => {
    const ids = new Set(Array.from({ length: 10_000 }, () => uuidv7(42)));
    expect(ids.size).to.equal(10_000);
    for (const id of ids) expect(id).to.match(V7);
  });
});
