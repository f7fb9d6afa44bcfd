import { expect } from 'chai';
import { nonJsonValue } from '../../src/contract/json-value';

describe('nonJsonValue: values JSON.stringify would not keep as they are', () => {
  it('accepts plain JSON, fields left undefined (left out, as optional fields are), shared references and a Date', () => {
    const shared = { a: 1 };
    expect(nonJsonValue({ tasks: [{ task_type: 'noop', payload: { n: 1.5, s: 'x', b: true, z: null, list: [1, [2]] } }] })).to.equal(null);
    expect(nonJsonValue({ task_type: 'noop', priority: undefined, payload: { f: () => 1 } })).to.equal(null);
    expect(nonJsonValue({ x: shared, y: shared, z: [shared, shared] })).to.equal(null);
    expect(nonJsonValue({ at: new Date(0) })).to.equal(null);
    expect(nonJsonValue(Object.create(null))).to.equal(null);
    expect(nonJsonValue('text')).to.equal(null);
  });

  it('names the first field that is not finite, a bigint, or not kept inside an array', () => {
    expect(nonJsonValue({ payload: { n: Infinity } })).to.deep.include({ path: 'payload.n' });
    expect(nonJsonValue({ payload: { n: NaN } })!.reason).to.match(/NaN.*null/);
    expect(nonJsonValue({ tasks: [{ payload: 1 }, { metadata: { big: 10n } }] })).to.deep.include({ path: 'tasks[1].metadata.big' });
    expect(nonJsonValue({ payload: [1, undefined, -Infinity] })).to.deep.include({ path: 'payload[1]' });
    expect(nonJsonValue({ payload: [() => 1] })).to.deep.include({ path: 'payload[0]' });
    // eslint-disable-next-line no-sparse-arrays
    expect(nonJsonValue({ payload: [1, , 3] })).to.deep.include({ path: 'payload[1]' });
    expect(nonJsonValue(Infinity)).to.deep.include({ path: 'body' });
  });

  it('names a Map, a Set, a class instance or a typed array, which JSON would not keep', () => {
    expect(nonJsonValue({ payload: { m: new Map([['a', 1]]) } })).to.deep.equal({
      path: 'payload.m',
      reason: 'is a Map, not a plain object: JSON would not keep it as it is',
    });
    expect(nonJsonValue({ payload: new Set([1]) })!.path).to.equal('payload');
    class Point {
      constructor(readonly x = 1) {}
    }
    expect(nonJsonValue({ payload: { p: new Point() } })!.reason).to.match(/^is a Point/);
    expect(nonJsonValue([new Uint8Array(2)])!.path).to.equal('[0]');
  });

  it('judges an object with its own toJSON by what it writes; an invalid Date or a throwing toJSON is named', () => {
    expect(nonJsonValue({ at: new Date(0), custom: { toJSON: () => ({ n: 1 }) } })).to.equal(null);
    expect(nonJsonValue({ custom: { toJSON: () => ({ n: Infinity }) } })).to.deep.include({ path: 'custom.n' });
    expect(nonJsonValue({ at: new Date('x') })).to.deep.equal({ path: 'at', reason: 'is an invalid Date (JSON would write null)' });
    const bad = {
      toJSON: () => {
        throw new Error('nope');
      },
    };
    expect(nonJsonValue({ list: [bad] }))
      .to.deep.include({ path: 'list[0]' })
      .and.have.property('reason')
      .that.match(/toJSON threw "nope"/);
  });

  it('refuses a value of more than a million values once written out (an object shared by many fields counts each time)', () => {
    let shared: unknown = [1];
    for (let i = 0; i < 22; i++) shared = { a: shared, b: shared }; // 2^22 paths, 23 objects
    expect(nonJsonValue({ payload: shared }))
      .to.deep.include({ path: 'body' })
      .and.have.property('reason')
      .that.match(/more than 1000000 values/);
    expect(nonJsonValue({ payload: Array.from({ length: 100_000 }, (_, i) => ({ i })) })).to.equal(null);
  });

  it('names a cycle where it closes, at any depth', () => {
    const a: Record<string, unknown> = { n: 1 };
    a.self = { back: a };
    expect(nonJsonValue({ payload: a })).to.deep.include({ path: 'payload.self.back' });
    const list: unknown[] = [];
    list.push(list);
    expect(nonJsonValue(list)!.path).to.equal('[0]');
    let deep: Record<string, unknown> = { n: Infinity };
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    // Named without recursion at any depth; the path is quoted back cut at 200 characters.
    expect(nonJsonValue(deep)!.path)
      .to.match(/^(d\.)+d…$/)
      .and.have.length.at.most(202);
  });
});
