import type { WorkerSlot } from '../../src/actors/dispatcher/worker-pool';
import type { PoolWorkers } from '../../src/actors/dispatcher/worker-pools';
import { PoolSpec, workerIdOf } from '../../src/actors/dispatcher/pool-specs';

/** A `run` message a fake worker received: the worker's id and the task ids it carried. */
export interface RecordedRun {
  workerId: string;
  ids: string[];
}

/**
 * Fake worker processes for a pool, as the dispatcher's `workersOf` gives them: `spec.processes`
 * slots named as the real ones, each with `spec.concurrency` credits (pid 100 + n), whose `run`
 * messages go to `runs` instead of a process.
 */
export function fakeWorkers(spec: PoolSpec, runs: RecordedRun[]): PoolWorkers & { slots: WorkerSlot[] } {
  const slots: WorkerSlot[] = Array.from({ length: spec.processes }, (_, i) => {
    const id = workerIdOf(spec.name, i);
    return {
      id,
      pid: 100 + i,
      credits: spec.concurrency,
      unanswered: false,
      ref: {
        tell: (_topic: string, msg: { tasks: Array<{ id: string }> }) => runs.push({ workerId: id, ids: msg.tasks.map((t) => t.id) }),
      },
    } as unknown as WorkerSlot;
  });
  return {
    slots,
    all: () => slots[Symbol.iterator](),
    get: (id: string) => slots.find((s) => s.id === id),
    start: async () => undefined,
    kill: (slot: WorkerSlot) => {
      slot.pid = 0;
      slot.credits = 0;
    },
    unanswered: (slot: WorkerSlot, held: boolean) => {
      slot.unanswered = held;
    },
    stop: () => undefined,
    disableRespawn: () => undefined,
    killLeftovers: () => undefined,
  };
}
