/** What the parts of the storage conformance suite share (see ./index.ts). */
import { Store } from '../../../src/storage/store';
import { TaskState } from '../../../src/domain/task';

export interface StoreFactory {
  /** A new, not yet opened store on fresh, empty storage. */
  create(): Promise<Store>;
  /** Releases everything `create` made (files, databases). Called after the store was closed. */
  destroy(store: Store): Promise<void>;
  /**
   * Operation groups the adapter does not offer yet (e.g. `workflows`), each with the reason: the
   * suite registers one skipped test per group instead of its tests.
   */
  unsupported?: Record<string, string>;
  /**
   * Test-only: sets task `id`'s state directly in the adapter's storage, for the lifecycle cases
   * whose state the contract cannot reach (see ./lifecycle.ts). Changes nothing else.
   */
  forceState?(store: Store, id: string, state: TaskState): Promise<void>;
}

/** Handed to every part: the store the suite's beforeEach opened for the running test. */
export interface ConformanceContext {
  /** The store of the running test, opened on fresh storage; closed and destroyed after it. */
  store(): Store;
  /** The state of task `id` in that store, or undefined when there is no such task. */
  stateOf(id: string): Promise<TaskState | undefined>;
}
