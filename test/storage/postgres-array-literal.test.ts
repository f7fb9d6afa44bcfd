/**
 * Array parameters of the PostgreSQL store, written by src/storage/postgres/array-literal.ts: the
 * same literal as node-postgres writes for the same array, and (with POSTGRES_URL) the same values
 * back from a real server for text, int, float8 and int8 arrays.
 */
import { expect } from 'chai';
import pg, { Client } from 'pg';
import { arrayLiteral, withArrayLiterals } from '../../src/storage/postgres/array-literal';
import { postgresUrl } from '../helpers/postgres-schema';

/** node-postgres's own conversion of a parameter (what it binds for an array). */
const pgPrepare = (pg as unknown as { utils: { prepareValue(v: unknown): unknown } }).utils.prepareValue;

const TEXTS = [
  'plain',
  '',
  'with "quotes"',
  'back\\slash',
  '\\"both\\"',
  '{braces},comma',
  ' spaced ',
  'NULL',
  'ünïcødé ✓ 𝄞',
  '{"json":[1,"two",null]}',
  'line\nbreak\ttab',
];

describe('PostgreSQL array parameters (array-literal.ts)', () => {
  it('writes the literal node-postgres writes, for strings, numbers, booleans and nulls', () => {
    const arrays: unknown[][] = [
      [],
      TEXTS,
      [1, -2, 0, -0, 3.25, 1e21, 1e-7, Number.MAX_SAFE_INTEGER, NaN, Infinity, -Infinity],
      [true, false, null, undefined, 'x', 7],
      [null],
    ];
    for (const a of arrays) expect(arrayLiteral(a), JSON.stringify(a)).to.equal(pgPrepare(a));
  });

  it('leaves to node-postgres the arrays it does not write: nested arrays, Buffers, Dates, objects', () => {
    for (const a of [[['a']], [Buffer.from('x')], [new Date(0)], [{ a: 1 }]]) expect(arrayLiteral(a)).to.equal(null);
    const values = [[['nested']], ['flat'], 3, 'text', null];
    expect(withArrayLiterals(values)).to.deep.equal([[['nested']], '{"flat"}', 3, 'text', null]);
    expect(values[1]).to.deep.equal(['flat']); // the caller's list is not changed
    expect(withArrayLiterals(undefined)).to.equal(undefined);
    const noArrays = [1, 'a'];
    expect(withArrayLiterals(noArrays)).to.equal(noArrays);
  });

  const url = postgresUrl();
  (url ? it : it.skip)('a real server reads the literals back as the values (text, int, float8, int8 arrays)', async () => {
    const c = new Client({ connectionString: url as string });
    await c.connect();
    try {
      const texts = [...TEXTS, null];
      const ints = [1, -2, 0, 2147483647, null];
      const floats = [3.25, -0.5, 1e21, 1e-7, null];
      const int8s = [Date.now(), Number.MAX_SAFE_INTEGER, -1, null];
      const { rows } = await c.query<{
        t: Array<string | null>;
        i: Array<number | null>;
        f: Array<number | null>;
        b: Array<string | null>;
      }>('SELECT $1::text[] AS t, $2::int[] AS i, $3::float8[] AS f, $4::int8[] AS b', withArrayLiterals([texts, ints, floats, int8s]));
      expect(rows[0].t).to.deep.equal(texts);
      expect(rows[0].i).to.deep.equal(ints);
      expect(rows[0].f).to.deep.equal(floats);
      expect(rows[0].b).to.deep.equal(int8s.map((v) => (v === null ? null : String(v))));
    } finally {
      await c.end();
    }
  });
});
