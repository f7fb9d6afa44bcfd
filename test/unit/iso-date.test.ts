import { expect } from 'chai';
import { LAST_RFC3339_MS, parseIsoWithOffset } from '../../src/contract/iso-date';
import { ISO_WITH_OFFSET } from '../../src/contract/task-schemas';

/** The schema's pattern and the parser accept the same texts. */
const both = (text: string) => ({ pattern: new RegExp(ISO_WITH_OFFSET).test(text), parsed: parseIsoWithOffset(text) });

describe('parseIsoWithOffset (RFC 3339 with an offset)', () => {
  const at = Date.UTC(2030, 0, 1, 10, 0, 0);

  it('T and Z in either case (RFC 3339 §5.6), offsets, fractions', () => {
    for (const text of [
      '2030-01-01T10:00:00Z',
      '2030-01-01t10:00:00z',
      '2030-01-01t10:00:00Z',
      '2030-01-01T11:00:00+01:00',
      '2030-01-01T05:30:00-04:30',
    ]) {
      expect(both(text), text).to.deep.equal({ pattern: true, parsed: at });
    }
    expect(parseIsoWithOffset('2030-01-01T10:00:00.123456789Z')).to.equal(at + 123);
  });

  it('seconds may be left out (ISO 8601 reduced precision)', () => {
    expect(both('2030-01-01T10:00Z')).to.deep.equal({ pattern: true, parsed: at });
  });

  it('refuses no offset, a space, days and times that do not exist, offsets beyond ±23:59, five-digit years', () => {
    for (const text of [
      '2030-01-01T10:00:00',
      '2030-01-01 10:00:00Z',
      '2030-02-30T10:00:00Z',
      '2030-01-01T24:00:00Z',
      '2030-01-01T10:60:00Z',
      '2030-01-01T10:00:60Z',
      '2030-01-01T10:00:00+24:00',
      '+010000-01-01T00:00:00.000Z',
    ]) {
      expect(parseIsoWithOffset(text), text).to.equal(null);
    }
  });

  it('refuses an offset that carries the instant out of years 0000–9999 in UTC; keeps milliseconds of a long fraction', () => {
    expect(parseIsoWithOffset('9999-12-31T23:59:59-01:00')).to.equal(null);
    expect(parseIsoWithOffset('0000-01-01T00:00:00+01:00')).to.equal(null);
    expect(parseIsoWithOffset('9999-12-31T22:59:59-01:00')).to.equal(Date.parse('9999-12-31T23:59:59Z'));
    expect(new Date(parseIsoWithOffset('0000-01-01T00:00:00Z') as number).toISOString()).to.equal('0000-01-01T00:00:00.000Z');
    expect(both('2030-01-01T10:00:00.000000000000000000001Z')).to.deep.equal({ pattern: true, parsed: at });
    expect(parseIsoWithOffset('2030-01-01T10:00:00.98765432109876Z')).to.equal(at + 987);
  });

  it('LAST_RFC3339_MS is the last instant with a four-digit year', () => {
    expect(new Date(LAST_RFC3339_MS).toISOString()).to.equal('9999-12-31T23:59:59.999Z');
    expect(new Date(LAST_RFC3339_MS + 1).toISOString()).to.equal('+010000-01-01T00:00:00.000Z');
  });
});
