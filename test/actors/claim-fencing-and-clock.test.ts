import { expect } from 'chai';
import { claimTime } from '../../src/actors/claim-batch';
import { ManualClock } from '../../src/domain/clock';
import { DueEntry, NewTask } from '../../src/domain/task';
import { SqliteStore } from '../../src/storage/sqlite/sqlite-store';
import { PartitionFences } from '../../src/cluster/partition-fences';
import { ExternalLanes } from '../../src/external/external-lanes';
import { externalQueueSpecs } from '../../src/external/external-queues';
import type { StreamDispatch } from '../../src/external/stream-dispatch';
import { actorDeps, waitingTask } from '../helpers/actor-deps';

const T0 = Date.UTC(2026, 5, 1, 12, 0, 0);

function scheduled(id: string, dueAt: number, queue = 'default'): NewTask {
  return waitingTask(id, dueAt, T0, { queue });
}

function entry(id: string, dueAt: number, queue = 'default'): DueEntry {
  return { id, partition: 0, seq: 1, dueAt, priority: 'medium', tenantId: 't', taskType: 'noop', state: 'SCHEDULED', queue };
}

/**
 * Claims of due tasks handed out before their due mark (the owner does not wait for it): they
 * carry the partition's fencing token on every path, and a clock that stepped back since the
 * hand-out does not make them refuse a due task.
 */
describe('claims of due tasks handed out before their mark', () => {
  let store: SqliteStore;
  let clock: ManualClock;

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    await store.open(1);
    clock = new ManualClock(T0);
  });
  afterEach(async () => {
    await store.close();
  });

  it('claimTime: the clock, or the latest due time of the batch when the clock reads earlier', () => {
    expect(claimTime([entry('a', T0 - 5), entry('b', T0 - 1)], T0)).to.equal(T0);
    expect(claimTime([entry('a', T0 - 5), entry('b', T0 + 3)], T0)).to.equal(T0 + 3);
    expect(claimTime([], T0)).to.equal(T0);
  });

  it('a clock 5 ms behind the hand-out still claims the due SCHEDULED task, started no earlier than due', async () => {
    await store.insertTasks([scheduled('a', T0 + 1000)]);
    const handedOut = [entry('a', T0 + 1000)];
    clock.set(T0 + 995); // stepped back after the owner saw T0 + 1000
    const [claimed] = await store.claimTasks(['a'], 'w', claimTime(handedOut, clock.now()), 1000);
    expect(claimed.id).to.equal('a');
    expect(claimed.startedAt).to.equal(T0 + 1000);
  });

  it('an external queue claims with the fencing token: a partition fenced by a newer owner is left alone', async () => {
    await store.insertTasks([scheduled('x', T0 + 1000, 'ext')]);
    const fences = new PartitionFences();
    fences.grant(0, 1); // this member still believes it holds epoch 1
    await store.fencePartition(0, 2); // another member took the partition with epoch 2
    const appended: string[] = [];
    const streams = {
      ensureGroup: async () => undefined,
      append: async (_spec: unknown, messages: Array<{ taskId: string }>) => messages.map((m) => (appended.push(m.taskId), '1-0')),
      remove: async () => undefined,
      reclaim: async () => [],
    } as unknown as StreamDispatch;
    const deps = actorDeps({
      store,
      clock,
      directory: { dispatcher: null, owners: [], cron: null },
      overrides: { partitions: 1, redisUrl: 'redis://127.0.0.1:1', externalQueues: { ext: {} } },
      fences,
    });
    let pumps = 0;
    const lanes = new ExternalLanes(deps, streams, externalQueueSpecs(deps.config), { record: async () => null, pump: () => void pumps++ });
    clock.set(T0 + 1000);
    lanes.add(entry('x', T0 + 1000, 'ext'));
    lanes.pump(clock.now());
    while (pumps === 0) await new Promise((r) => setImmediate(r));
    expect(appended).to.deep.equal([]);
    expect((await store.getTask('x'))!.state).to.equal('SCHEDULED');
    lanes.stop();
  });
});
