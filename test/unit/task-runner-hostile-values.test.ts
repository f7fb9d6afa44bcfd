import { expect } from 'chai';
import { TaskRunner } from '../../src/actors/worker/task-runner';
import { WorkItem, WorkResult } from '../../src/actors/protocol';
import { ManualClock } from '../../src/domain/clock';
import { isPermanent, TaskHandler } from '../../src/handlers/types';

/** Lets the handler promise settle and the runner's per-turn report (setImmediate) go out. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

function item(id: string, taskType: string): WorkItem {
  return { id, attempt: 1, taskType, payload: null, timeoutMs: 10_000, idempotencyKey: null };
}

const throwing = (): never => {
  throw new Error('read refused');
};

/** Values a handler may throw or do whose reads throw, found by a helper driving hostile handlers. */
describe('TaskRunner with hostile handler values', () => {
  let clock: ManualClock;
  let reported: WorkResult[];
  const report = (results: WorkResult[]) => reported.push(...results);

  beforeEach(() => {
    clock = new ManualClock();
    reported = [];
  });
  afterEach(() => {
    expect(clock.pendingTimers(), 'timeout timers left behind').to.equal(0);
  });

  it('isPermanent of a value whose name or permanent getter throws is false, and does not throw', () => {
    expect(isPermanent(Object.defineProperty(new Error('x'), 'name', { get: throwing }))).to.equal(false);
    expect(isPermanent(Object.defineProperty(new Error('x'), 'permanent', { get: throwing }))).to.equal(false);
    expect(isPermanent(new Proxy({}, { get: throwing }))).to.equal(false);
  });

  for (const [name, make] of [
    ['a throwing name getter', () => Object.defineProperty(new Error('x'), 'name', { get: throwing })],
    ['a throwing permanent getter', () => Object.defineProperty(new Error('x'), 'permanent', { get: throwing })],
    ['a Proxy whose every trap throws', () => new Proxy({}, { get: throwing, has: throwing, getPrototypeOf: throwing, ownKeys: throwing })],
  ] as const) {
    it(`a thrown value with ${name} ends its attempt at once as a retryable failure (not at its timeout)`, async () => {
      const handlers = new Map<string, TaskHandler>([
        [
          'bad',
          () => {
            throw make();
          },
        ],
      ]);
      const runner = new TaskRunner(handlers, report, clock);
      runner.run([item('t1', 'bad')]);
      await settle();
      expect(reported).to.have.length(1);
      expect(reported[0].outcome).to.include({ kind: 'failed', permanent: false });
    });
  }

  it("a handler that replaces JSON.stringify spoils its own result only, not the next attempts' in its process", async () => {
    const original = JSON.stringify;
    const handlers = new Map<string, TaskHandler>([
      [
        'patch',
        () => {
          JSON.stringify = () => {
            throw new Error('patched');
          };
          return { ok: 1 };
        },
      ],
      ['echo', () => ({ hello: 'world' })],
    ]);
    try {
      const runner = new TaskRunner(handlers, report, clock);
      runner.run([item('p', 'patch')]);
      await settle();
      runner.run([item('e', 'echo')]);
      await settle();
    } finally {
      JSON.stringify = original;
    }
    expect(reported.map((r) => [r.id, r.outcome])).to.deep.equal([
      ['p', { kind: 'succeeded', result: { ok: 1 } }],
      ['e', { kind: 'succeeded', result: { hello: 'world' } }],
    ]);
  });
});
