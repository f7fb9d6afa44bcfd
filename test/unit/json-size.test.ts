import { expect } from 'chai';
import { jsonBytesAtLeast } from '../../src/domain/json-size';

const bytesOf = (v: unknown): number => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');

/** An object graph sharing its levels: each level holds the one below twice (2^depth leaves). */
function sharedLevels(depth: number): unknown {
  let v: unknown = { leaf: 'x' };
  for (let i = 0; i < depth; i++) v = { a: v, b: v };
  return v;
}

const throwing = (): never => {
  throw new Error('read refused');
};

describe('jsonBytesAtLeast: a lower bound of the JSON text, found without stringifying', () => {
  it('is never above the real size, and exact for ASCII strings and keys', () => {
    const values: unknown[] = [
      'abc',
      'é'.repeat(10),
      '\u2028\n"',
      '\ud800', // a lone surrogate: written as an escape
      0,
      -12.5e-300,
      true,
      null,
      undefined,
      [],
      [undefined, () => 1, Symbol('s'), 1],
      { a: 1, b: undefined, c: () => 1, [Symbol('k')]: 2, d: [null, 'x'] },
      Object.assign(Object.create(null) as object, { k: 'v' }),
      new Date(0),
      new Map([[1, 2]]),
      { toJSON: () => 1, big: 'x'.repeat(1000) },
      new Uint8Array([1, 2, 300]),
      new Float64Array([1.5, -2]),
      Buffer.from('hello'),
      new DataView(new ArrayBuffer(64)),
      new ArrayBuffer(64),
      new (class Point {
        x = 1;
      })(),
      sharedLevels(5),
    ];
    for (const v of values) expect(jsonBytesAtLeast(v, 1e9), String(JSON.stringify(v))).to.be.at.most(bytesOf(v));
    expect(jsonBytesAtLeast('abc', 1e9)).to.equal(5);
    expect(jsonBytesAtLeast({ ab: 'cd' }, 1e9)).to.equal(bytesOf({ ab: 'cd' }) - 2); // the braces are not counted
  });

  it('finds a large typed array, a large Buffer and a graph sharing its levels past the limit at once', () => {
    const MiB = 1 << 20;
    expect(jsonBytesAtLeast(new Uint8Array(10 * MiB), MiB)).to.be.above(MiB);
    expect(jsonBytesAtLeast({ data: [Buffer.alloc(2 * MiB)] }, MiB)).to.be.above(MiB);
    // 2^40 leaves: stringifying it would not end; 41 distinct objects are walked.
    expect(jsonBytesAtLeast(sharedLevels(40), MiB)).to.be.above(MiB);
    expect(jsonBytesAtLeast(['x'.repeat(MiB)], MiB)).to.be.above(MiB);
    // A billion holes, each written `null`: found within its first items, not by visiting all.
    expect(jsonBytesAtLeast(new Array(1e9), MiB)).to.be.above(MiB);
  });

  it('stops at its node budget, and answers "may fit" for what it does not count', () => {
    const wide = Array.from({ length: 100 }, () => ({ s: 'x'.repeat(100) }));
    expect(jsonBytesAtLeast(wide, 5_000, 10), 'ten objects walked').to.be.at.most(5_000);
    expect(jsonBytesAtLeast(wide, 5_000)).to.be.above(5_000);
    expect(jsonBytesAtLeast({ toJSON: () => 'small', big: 'x'.repeat(5_000) }, 100)).to.equal(0);
    let deep: unknown = 'x'.repeat(500);
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(jsonBytesAtLeast(deep, 100), 'past 256 levels nothing counts (and the stack holds)').to.equal(0);
  });

  it('never throws: a throwing getter or Proxy trap ends the walk', () => {
    const getter = Object.defineProperty({}, 'x', { get: throwing, enumerable: true });
    expect(jsonBytesAtLeast(getter, 100)).to.equal(0);
    expect(jsonBytesAtLeast(new Proxy({}, { get: throwing, ownKeys: throwing, getPrototypeOf: throwing }), 100)).to.equal(0);
    // A part already past the limit still counts.
    expect(jsonBytesAtLeast([{ s: 'x'.repeat(200) }, getter], 100)).to.be.above(100);
    const cycle: Record<string, unknown> = { s: 'abc' };
    cycle.self = cycle;
    expect(jsonBytesAtLeast(cycle, 100)).to.be.at.most(100);
  });
});
