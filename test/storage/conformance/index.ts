/**
 * The storage conformance suite (DESIGN §13): every Store adapter runs this same suite, like
 * Agenda's shared repository tests or pg-boss running its suite on several databases. It checks
 * the contract of src/storage/store.ts only — never an adapter's internals — and passes `now`
 * explicitly everywhere (fixed epoch numbers).
 *
 * Usage, from an adapter's test file:
 *   describeStoreConformance('sqlite', { create: async () => new SqliteStore(file), destroy: … });
 *
 * Each Store operation group lives in its own file of this folder; this file opens a fresh store
 * for every test and registers the groups, in this order.
 */
import { TaskState } from '../../../src/domain/task';
import { Store } from '../../../src/storage/store';
import { PARTITIONS } from '../fixtures';
import { describeAudit } from './audit';
import { describeCancel } from './cancel';
import { describeClaim } from './claim';
import { describeComplete } from './complete';
import { describeDeadLetter } from './dead-letter';
import { describeIdempotency } from './idempotency';
import { describeLeases } from './leases';
import { ConformanceContext, StoreFactory } from './context';
import { describeInsertAndGet } from './insert-and-get';
import { describeList } from './list';
import { describeLoadDue } from './load-due';
import { describeMarkPending } from './mark-pending';
import { describeUpdateWaiting } from './update-waiting';
import { describeOpenClose } from './open-close';
import { describeOrphansAndCounts } from './orphans-and-counts';
import { describeRetention } from './retention';
import { describeCron } from './cron';
import { describeWorkflows } from './workflows';
import { describeTenants } from './tenants';
import { describeConcurrencyLimits } from './concurrency-limits';
import { describeCluster } from './cluster';
import { describeFencing } from './fencing';
import { describeOverflow } from './overflow';
import { describeCheckpoints } from './checkpoints';
import { describeLifecycle } from './lifecycle';
import { describeAttemptLogs } from './attempt-logs';

export type { ConformanceContext, StoreFactory } from './context';

export function describeStoreConformance(name: string, factory: StoreFactory): void {
  describe(`Store conformance: ${name}`, () => {
    let store: Store;

    beforeEach(async () => {
      store = undefined as unknown as Store;
      const s = await factory.create();
      try {
        await s.open(PARTITIONS);
      } catch (err) {
        await factory.destroy(s);
        throw err;
      }
      store = s;
    });

    afterEach(async () => {
      if (!store) return;
      try {
        await store.close();
      } finally {
        await factory.destroy(store);
      }
    });

    async function stateOf(id: string): Promise<TaskState | undefined> {
      return (await store.getTask(id))?.state;
    }

    const ctx: ConformanceContext = { store: () => store, stateOf };

    describeInsertAndGet(ctx);
    describeLoadDue(ctx);
    describeMarkPending(ctx);
    describeUpdateWaiting(ctx);
    describeClaim(ctx);
    describeComplete(ctx);
    describeCancel(ctx);
    describeDeadLetter(ctx);
    describeIdempotency(ctx);
    describeLeases(ctx);
    describeCheckpoints(ctx);
    describeAttemptLogs(ctx);
    describeAudit(ctx);
    describeList(ctx);
    describeOrphansAndCounts(ctx);
    describeRetention(ctx);
    describeCron(ctx);
    describeOpenClose(ctx);
    const reason = factory.unsupported?.workflows;
    if (reason) describe('workflows', () => it.skip(`not offered by this adapter yet: ${reason}`, () => undefined));
    else describeWorkflows(ctx);
    describeTenants(ctx);
    describeConcurrencyLimits(ctx);
    describeCluster(ctx);
    describeFencing(ctx);
    describeOverflow(ctx);
    describeLifecycle(ctx, factory.forceState?.bind(factory));
  });
}
