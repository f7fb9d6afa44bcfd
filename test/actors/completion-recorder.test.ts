import { expect } from 'chai';
import pino from 'pino';
import { CompletionRecorder, UNWRITTEN_RETRY_MS } from '../../src/actors/dispatcher/completion-recorder';
import type { ActorRouter } from '../../src/actors/router';
import { ManualClock } from '../../src/domain/clock';
import { SchedulerMetrics } from '../../src/observability/metrics';
import { StoreHealth, storeUnavailable } from '../../src/storage/store-health';
import type { AttemptCompletion, CompletionResult, Store } from '../../src/storage/store';
import { completion } from '../storage/fixtures';

const flush = () => new Promise((r) => setImmediate(r));

/** A recorder over a store whose writes fail while `down` (a full disk), on a manual clock. */
function fixture() {
  const clock = new ManualClock();
  const health = new StoreHealth();
  const world = { down: false, poison: new Set<string>(), written: [] as Array<{ ids: string[]; now: number }> };
  const store = {
    health,
    async completeAttempts(completions: AttemptCompletion[], now: number): Promise<CompletionResult[]> {
      if (completions.some((c) => world.poison.has(c.taskId))) throw new RangeError('Maximum call stack size exceeded');
      if (world.down) {
        health.report({ kind: 'disk_full', target: 'x.db', cause: 'SQLITE_FULL', recoverable: true, since: clock.now() });
        throw storeUnavailable(health.fault ?? ({} as never));
      }
      world.written.push({ ids: completions.map((c) => c.taskId), now });
      return completions.map((c) => ({ taskId: c.taskId, applied: true, state: c.state, taskType: 'noop' }) as CompletionResult);
    },
  } as unknown as Store;
  const router = { offer: () => undefined, instancesEnded: () => undefined } as unknown as ActorRouter;
  const metrics = new SchedulerMetrics(async () => ({}) as never);
  const settled: string[] = [];
  const recorder = new CompletionRecorder(
    { store, clock, metrics, log: pino({ level: 'silent' }), router },
    { settled: (cs) => settled.push(...cs.map((c) => c.taskId)), ready: () => undefined, written: () => undefined },
  );
  return { clock, health, world, recorder, settled };
}

describe('CompletionRecorder: completions the store did not take (manual clock)', () => {
  it('keeps them, holds their attempts (not lost to a lease sweep), and writes them once the store takes writes', async () => {
    const f = fixture();
    f.world.down = true;
    expect(await f.recorder.record([completion('a', 1, 'SUCCEEDED'), completion('b', 2, 'SUCCEEDED')], 1000)).to.equal(null);
    expect(await f.recorder.record([completion('c', 1, 'FAILED')], 2000)).to.equal(null);
    expect(f.recorder.unwrittenCount).to.equal(3);
    expect(f.recorder.holds('a', 1)).to.equal(true);
    expect(f.recorder.holds('a', 2)).to.equal(false);
    f.clock.advance(UNWRITTEN_RETRY_MS * 5); // retried every second, still refused
    await flush();
    expect(f.world.written).to.deep.equal([]);
    expect(f.recorder.unwrittenCount).to.equal(3);
    f.world.down = false;
    f.clock.advance(UNWRITTEN_RETRY_MS);
    await flush();
    // In the order they came, each batch with the instant it was decided at.
    expect(f.world.written).to.deep.equal([
      { ids: ['a', 'b'], now: 1000 },
      { ids: ['c'], now: 2000 },
    ]);
    expect(f.settled).to.deep.equal(['a', 'b', 'c']);
    expect(f.recorder.unwrittenCount).to.equal(0);
    expect(f.recorder.holds('a', 1)).to.equal(false);
    f.clock.advance(UNWRITTEN_RETRY_MS * 3);
    await flush();
    expect(f.world.written).to.have.length(2); // written once, never again
    expect(f.clock.pendingTimers()).to.equal(0);
    f.recorder.stop();
  });

  it('a batch refused for a reason of its own is retried one completion at a time: the one refused holds no other back, and is kept', async () => {
    const f = fixture();
    f.world.poison.add('p');
    expect(
      await f.recorder.record([completion('a', 1, 'SUCCEEDED'), completion('p', 1, 'SUCCEEDED'), completion('b', 1, 'SUCCEEDED')], 1000),
    ).to.equal(null);
    expect(await f.recorder.record([completion('c', 1, 'SUCCEEDED')], 2000)).to.have.length(1); // the store takes other batches
    f.clock.advance(UNWRITTEN_RETRY_MS);
    await flush();
    expect(f.world.written).to.deep.equal([
      { ids: ['c'], now: 2000 },
      { ids: ['a'], now: 1000 },
      { ids: ['b'], now: 1000 },
    ]);
    expect(f.recorder.unwrittenCount).to.equal(1);
    expect(f.recorder.holds('p', 1), 'never dropped').to.equal(true);
    expect(f.recorder.holds('a', 1)).to.equal(false);
    f.world.poison.clear();
    f.clock.advance(UNWRITTEN_RETRY_MS);
    await flush();
    expect(f.world.written.at(-1)).to.deep.equal({ ids: ['p'], now: 1000 });
    expect(f.recorder.unwrittenCount).to.equal(0);
    expect(f.clock.pendingTimers()).to.equal(0);
    f.recorder.stop();
  });

  it("the store's recovery writes them at once, without waiting for the next retry", async () => {
    const f = fixture();
    f.world.down = true;
    await f.recorder.record([completion('a', 1, 'SUCCEEDED')], 1000);
    f.world.down = false;
    f.health.recovered();
    await flush();
    expect(f.world.written.map((w) => w.ids)).to.deep.equal([['a']]);
    f.recorder.stop();
    expect(f.clock.pendingTimers()).to.equal(0);
  });
});
