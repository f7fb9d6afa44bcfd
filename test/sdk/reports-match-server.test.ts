import { expect } from 'chai';
import { progressProblem } from '../../src/domain/progress';
import { WELL_FORMED_TEXT } from '../../src/contract/well-formed-text';
import { externalCompletionSchema } from '../../src/contract/external-schemas';
import { SchemaValidator } from '../../src/contract/validation';
import { assertProgressValue } from '../../src/sdk/worker/attempt-reports';
import { failed, succeeded } from '../../src/sdk/worker/outcome';
import { exceedsJsonDepth } from '../../src/domain/json-depth';
import { HEARTBEAT_BOUNDS_MS, heartbeatIntervalMs } from '../../src/sdk/worker/timing';

/**
 * The pull worker SDK checks and shapes its reports so that the scheduler takes them: a report
 * the endpoint refuses is dropped (progress) or, for a completion, leaves the attempt to run again
 * after its lease. The SDK stands alone (no runtime import of the service's modules), so its rules
 * are held here to the service's own.
 */
describe('SDK reports are ones the scheduler takes', () => {
  const values: unknown[] = [
    0,
    1,
    0.5,
    -0.1,
    1.5,
    Number.NaN,
    Infinity,
    null,
    [],
    'half',
    {},
    { done: 1 },
    { total: 2 },
    { message: 'copying' },
    { done: 5, total: 2 },
    { done: 2, total: 2, message: 'x' },
    { done: -1 },
    { done: '1' },
    { done: Infinity },
    { message: 'm'.repeat(200) },
    { message: 'm'.repeat(201) },
    { message: 7 },
    { done: 1, extra: true },
    { done: undefined },
  ];
  for (const value of values) {
    it(`progress ${JSON.stringify(value) ?? String(value)}: the SDK accepts it exactly when the scheduler does`, () => {
      const server = progressProblem(value) === null;
      let sdk = true;
      try {
        assertProgressValue(value);
      } catch {
        sdk = false;
      }
      expect(sdk).to.equal(server);
    });
  }

  const completion = new SchemaValidator();
  const names: Array<[string, string]> = [
    ['a NUL', 'Bad\u0000Name'],
    ['a lone surrogate', 'x\ud800y'],
    ['201 astral characters (a pair cut in two by a 200-unit slice)', 'a' + '😀'.repeat(200)],
    ['an empty name', ''],
    ['300 plain characters', 'E'.repeat(300)],
  ];
  for (const [what, name] of names) {
    it(`a thrown error whose name has ${what} gives a completion the endpoint takes, its type well formed`, () => {
      const err = Object.assign(new Error('boom'), { permanent: true });
      err.name = name;
      const outcome = failed(err);
      if (outcome.kind !== 'failed') throw new Error('expected a failure');
      expect(outcome.error.permanent).to.equal(true);
      expect(outcome.error.type).to.match(new RegExp(WELL_FORMED_TEXT, 'u'));
      expect([...outcome.error.type].length).to.be.within(1, 200);
      const body = JSON.parse(JSON.stringify({ attempt: 1, error: outcome.error })) as unknown;
      expect(() => completion.assert(externalCompletionSchema, body)).not.to.throw();
    });
  }

  it('a result nested deeper than the endpoint takes is a permanent failure, not a report it refuses', () => {
    const nested = (depth: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };
    for (const depth of [64, 65, 5000]) {
      const outcome = succeeded(nested(depth));
      const body = { attempt: 1, ...(outcome.kind === 'succeeded' ? { result: outcome.result } : { error: outcome.error }) };
      expect(outcome.kind, `depth ${depth}`).to.equal(exceedsJsonDepth(nested(depth)) ? 'failed' : 'succeeded');
      // As the endpoint's 400 on it would give (attempt.ts), without sending what cannot be sent.
      if (outcome.kind === 'failed') expect(outcome.error).to.include({ type: 'result_rejected', permanent: true });
      else expect(() => completion.assert(externalCompletionSchema, body)).not.to.throw();
    }
  });

  it('a message of 10,000 astral characters is cut on a code point, not inside a pair', () => {
    const outcome = failed(new Error('😀'.repeat(10_001)));
    if (outcome.kind !== 'failed') throw new Error('expected a failure');
    expect([...outcome.error.message]).to.have.length(10_000);
    expect(outcome.error.message.endsWith('😀')).to.equal(true);
  });

  it('automatic heartbeats: three within the shortest lease a queue may have (100 ms); 200 ms when the expiry is already past here', () => {
    const now = Date.UTC(2026, 0, 1);
    const at = (ms: number) => new Date(now + ms).toISOString();
    expect(heartbeatIntervalMs(at(100), now)).to.be.at.most(100 / 3);
    expect(heartbeatIntervalMs(at(150), now)).to.equal(50);
    expect(heartbeatIntervalMs(at(30), now)).to.equal(HEARTBEAT_BOUNDS_MS.min);
    expect(heartbeatIntervalMs(at(-5000), now)).to.equal(200);
    expect(heartbeatIntervalMs(at(3_600_000), now)).to.equal(60_000);
    expect(heartbeatIntervalMs('not a date', now)).to.equal(10_000);
  });
});
