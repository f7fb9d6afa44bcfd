/** Store conformance, cron definitions, firing and fire records (see ./index.ts). */
import { expect } from 'chai';
import { CronRecord, cronInstanceId } from '../../../src/domain/cron/cron-definition';
import { CronFiring, PlannedInstance } from '../../../src/storage/cron-store';
import { completion, newTask, startTask, T0 } from '../fixtures';
import { ConformanceContext } from './context';

const SEC = 1000;

export function cronRecord(id: string, overrides: Partial<CronRecord> = {}): CronRecord {
  return {
    id,
    partition: 0,
    name: `cron ${id}`,
    cronExpression: '* * * * * *',
    timezone: 'UTC',
    template: { task_type: 'noop', payload: { from: id } },
    tenantId: 'default',
    overlapPolicy: 'skip',
    catchUp: 'latest',
    maxCatchUp: 100,
    enabled: true,
    nextFireTime: T0 + SEC,
    lastFireTime: null,
    version: 1,
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A planned instance of cron `cronId` at `fireTime` (skipped ones carry no task). */
function planned(cronId: string, fireTime: number, outcome: PlannedInstance['outcome'] = 'created'): PlannedInstance {
  return {
    fireTime,
    outcome,
    reason: outcome === 'skipped' ? 'misfire' : null,
    task:
      outcome === 'skipped'
        ? null
        : newTask(cronInstanceId(cronId, fireTime), { dueAt: fireTime, scheduledAt: fireTime, state: 'PENDING' }),
  };
}

export function firing(cron: CronRecord, fireTimes: number[], overrides: Partial<CronFiring> = {}): CronFiring {
  const last = fireTimes[fireTimes.length - 1];
  return {
    cronId: cron.id,
    expectedNextFireTime: cron.nextFireTime as number,
    expectedVersion: cron.version,
    nextFireTime: last + SEC,
    overlapPolicy: cron.overlapPolicy,
    maxQueued: cron.maxCatchUp,
    instances: fireTimes.map((t) => planned(cron.id, t)),
    ...overrides,
  };
}

export function describeCron(ctx: ConformanceContext): void {
  describe('cron definitions', () => {
    it('creates, reads, edits (version + 1) and deletes a definition', async () => {
      const s = ctx.store();
      await s.createCron(cronRecord('c1'));
      expect(await s.getCron('c1')).to.deep.equal(cronRecord('c1'));
      const edited = await s.updateCron('c1', { enabled: false, template: { task_type: 'echo' }, nextFireTime: T0 + 5 * SEC }, T0 + 7);
      expect(edited).to.include({ enabled: false, version: 2, nextFireTime: T0 + 5 * SEC, updatedAt: T0 + 7, name: 'cron c1' });
      expect(edited?.template).to.deep.equal({ task_type: 'echo' });
      expect(await s.updateCron('nope', { enabled: true }, T0)).to.equal(null);
      // A compare-and-set on the version: an edit merged into version 1 is refused, one into 2 applies.
      expect(await s.updateCron('c1', { name: 'stale', ifVersion: 1 }, T0 + 8)).to.equal(null);
      expect(await s.getCron('c1')).to.include({ name: 'cron c1', version: 2, updatedAt: T0 + 7 });
      expect(await s.updateCron('c1', { name: 'fresh', ifVersion: 2 }, T0 + 9)).to.include({ name: 'fresh', version: 3 });
      expect(await s.deleteCron('c1')).to.equal(true);
      expect(await s.getCron('c1')).to.equal(null);
      expect(await s.deleteCron('c1')).to.equal(false);
    });

    it('lists newest first with a cursor, filtered by tenant and enabled', async () => {
      const s = ctx.store();
      for (let i = 0; i < 5; i++) await s.createCron(cronRecord(`l${i}`, { tenantId: i % 2 ? 'b' : 'a', enabled: i !== 4 }));
      const first = await s.listCrons({ limit: 2 });
      expect(first.crons.map((c) => c.id)).to.deep.equal(['l4', 'l3']);
      const second = await s.listCrons({ limit: 2, cursor: first.nextCursor as string });
      expect(second.crons.map((c) => c.id)).to.deep.equal(['l2', 'l1']);
      expect((await s.listCrons({ limit: 10, tenantId: 'a' })).crons.map((c) => c.id)).to.deep.equal(['l4', 'l2', 'l0']);
      expect((await s.listCrons({ limit: 10, enabled: false })).crons.map((c) => c.id)).to.deep.equal(['l4']);
    });

    it('loadDueCrons: enabled definitions due by then, earliest first', async () => {
      const s = ctx.store();
      await s.createCron(cronRecord('d-late', { nextFireTime: T0 + 30 * SEC }));
      await s.createCron(cronRecord('d-early', { nextFireTime: T0 + 2 * SEC }));
      await s.createCron(cronRecord('d-off', { nextFireTime: T0 + SEC, enabled: false }));
      await s.createCron(cronRecord('d-never', { nextFireTime: null }));
      expect((await s.loadDueCrons(T0 + 60 * SEC, 10)).map((c) => c.id)).to.deep.equal(['d-early', 'd-late']);
      expect((await s.loadDueCrons(T0 + 10 * SEC, 10)).map((c) => c.id)).to.deep.equal(['d-early']);
      expect((await s.loadDueCrons(T0 + 60 * SEC, 1)).map((c) => c.id)).to.deep.equal(['d-early']);
    });
  });

  describe('fireCrons', () => {
    it('creates the instance and the fire record and moves next_fire_time; the same firing again changes nothing', async () => {
      const s = ctx.store();
      const cron = cronRecord('f1');
      await s.createCron(cron);
      const [r] = await s.fireCrons([firing(cron, [T0 + SEC])], T0 + SEC + 3);
      const id = cronInstanceId('f1', T0 + SEC);
      expect(r.applied).to.equal(true);
      expect(r.entries.map((e) => [e.id, e.state])).to.deep.equal([[id, 'PENDING']]);
      expect(r.records).to.deep.equal([
        { cronId: 'f1', fireTime: T0 + SEC, outcome: 'created', reason: null, taskId: id, recordedAt: T0 + SEC + 3 },
      ]);
      expect(await s.getCron('f1')).to.include({ nextFireTime: T0 + 2 * SEC, lastFireTime: T0 + SEC, version: 1 });
      expect(await s.getTask(id)).to.include({ state: 'PENDING', cronId: 'f1' });
      const [again] = await s.fireCrons([firing(cron, [T0 + SEC])], T0 + SEC + 4);
      expect(again).to.deep.equal({ cronId: 'f1', applied: false, entries: [], aborts: [], records: [] });
      expect((await s.listCronFires('f1', { limit: 10 })).fires).to.have.length(1);
    });

    it('refuses a firing planned on an older version, a paused or a deleted definition', async () => {
      const s = ctx.store();
      const cron = cronRecord('f2');
      await s.createCron(cron);
      await s.updateCron('f2', { name: 'renamed' }, T0 + 1);
      expect((await s.fireCrons([firing(cron, [T0 + SEC])], T0 + SEC))[0].applied).to.equal(false);
      await s.updateCron('f2', { enabled: false }, T0 + 2);
      expect((await s.fireCrons([firing({ ...cron, version: 3 }, [T0 + SEC])], T0 + SEC))[0].applied).to.equal(false);
      await s.deleteCron('f2');
      expect((await s.fireCrons([firing({ ...cron, version: 3 }, [T0 + SEC])], T0 + SEC))[0].applied).to.equal(false);
      expect(await s.getTask(cronInstanceId('f2', T0 + SEC))).to.equal(null);
    });

    it('records skipped firings without a task, and firings of several crons apply independently', async () => {
      const s = ctx.store();
      const a = cronRecord('fa');
      const b = cronRecord('fb');
      await s.createCron(a);
      await s.createCron(b);
      const skipped = { ...firing(a, [T0 + SEC]), instances: [planned('fa', T0 + SEC, 'skipped')] };
      const stale = { ...firing(b, [T0 + SEC]), expectedVersion: 9 };
      const results = await s.fireCrons([skipped, stale], T0 + SEC);
      expect(results.map((r) => r.applied)).to.deep.equal([true, false]);
      expect(results[0].records[0]).to.include({ outcome: 'skipped', reason: 'misfire', taskId: null });
      expect(results[0].entries).to.deep.equal([]);
    });

    it('overlap skip: a live instance turns a planned creation into a skipped (overlap) record', async () => {
      const s = ctx.store();
      let cron = cronRecord('os');
      await s.createCron(cron);
      await s.fireCrons([firing(cron, [T0 + SEC])], T0 + SEC);
      cron = (await s.getCron('os')) as CronRecord;
      const [r] = await s.fireCrons([firing(cron, [T0 + 2 * SEC])], T0 + 2 * SEC);
      expect(r.records[0]).to.include({ outcome: 'skipped', reason: 'overlap', taskId: null });
      expect(await s.getTask(cronInstanceId('os', T0 + 2 * SEC))).to.equal(null);
    });

    it('overlap queue: BLOCKED behind the live instance, released oldest first when it ends, bounded by maxQueued', async () => {
      const s = ctx.store();
      let cron = cronRecord('oq', { overlapPolicy: 'queue', maxCatchUp: 2 });
      await s.createCron(cron);
      for (let i = 1; i <= 4; i++) {
        await s.fireCrons([firing(cron, [T0 + i * SEC])], T0 + i * SEC);
        cron = (await s.getCron('oq')) as CronRecord;
      }
      const ids = [1, 2, 3, 4].map((i) => cronInstanceId('oq', T0 + i * SEC));
      expect(await Promise.all(ids.map((id) => ctx.stateOf(id)))).to.deep.equal(['PENDING', 'BLOCKED', 'BLOCKED', undefined]);
      const fires = (await s.listCronFires('oq', { limit: 10 })).fires;
      expect(fires[0]).to.include({ fireTime: T0 + 4 * SEC, outcome: 'skipped', reason: 'queue_full' });
      expect(await s.cronsWithQueuedInstances(10)).to.deep.equal(['oq']);
      expect((await s.auditScan(T0 + 5 * SEC, T0, 10)).blockedLimboTotal, 'queued instances are not workflow limbo').to.equal(0);
      expect(await s.releaseQueuedInstances(['oq'], T0 + 5 * SEC)).to.deep.equal([]); // first still live
      const attempt = await startTask(s, ids[0], T0 + 5 * SEC);
      await s.completeAttempts([completion(ids[0], attempt, 'SUCCEEDED')], T0 + 6 * SEC);
      const released = await s.releaseQueuedInstances(['oq', 'oq'], T0 + 6 * SEC);
      expect(released.map((e) => [e.id, e.state])).to.deep.equal([[ids[1], 'PENDING']]);
      expect(await s.releaseQueuedInstances(['oq'], T0 + 6 * SEC)).to.deep.equal([]);
      expect(await ctx.stateOf(ids[2])).to.equal('BLOCKED');
    });

    it('overlap cancel_running: waiting instances are cancelled; a running one is asked to cancel and the new one waits for its end', async () => {
      const s = ctx.store();
      let cron = cronRecord('oc', { overlapPolicy: 'cancel_running' });
      await s.createCron(cron);
      await s.fireCrons([firing(cron, [T0 + SEC])], T0 + SEC);
      cron = (await s.getCron('oc')) as CronRecord;
      const first = cronInstanceId('oc', T0 + SEC);
      const second = cronInstanceId('oc', T0 + 2 * SEC);
      const attempt = await startTask(s, first, T0 + SEC);
      const [r] = await s.fireCrons([firing(cron, [T0 + 2 * SEC])], T0 + 2 * SEC);
      expect(r.aborts).to.deep.equal([{ taskId: first, attempt }]);
      expect(r.entries).to.deep.equal([]); // not beside the running one
      expect(r.records.map((x) => [x.outcome, x.taskId])).to.deep.equal([['created', second]]);
      expect((await s.getTask(first))?.cancelRequested).to.equal(true);
      expect(await ctx.stateOf(second)).to.equal('BLOCKED');
      expect(await s.releaseQueuedInstances(['oc'], T0 + 2 * SEC + 1)).to.deep.equal([]); // the first still runs
      await s.completeAttempts([completion(first, attempt, 'CANCELLED')], T0 + 2 * SEC + 2);
      expect((await s.releaseQueuedInstances(['oc'], T0 + 2 * SEC + 3)).map((e) => e.id)).to.deep.equal([second]);
      expect(await ctx.stateOf(second)).to.equal('PENDING');
      cron = (await s.getCron('oc')) as CronRecord;
      // the second is PENDING (it may be in a claim): cancelled at once, the third queued behind it
      const [r3] = await s.fireCrons([firing(cron, [T0 + 3 * SEC])], T0 + 3 * SEC);
      expect(r3.aborts).to.deep.equal([]);
      expect(await ctx.stateOf(second)).to.equal('CANCELLED');
      expect(r3.entries).to.deep.equal([]);
      const third = cronInstanceId('oc', T0 + 3 * SEC);
      expect((await s.releaseQueuedInstances(['oc'], T0 + 3 * SEC + 1)).map((e) => e.id)).to.deep.equal([third]);
      expect(await ctx.stateOf(third)).to.equal('PENDING');
    });

    it('a catch-up of several firings: the first PENDING, the later ones BLOCKED behind it, in order', async () => {
      const s = ctx.store();
      const cron = cronRecord('cu', { overlapPolicy: 'skip' });
      await s.createCron(cron);
      const times = [1, 2, 3].map((i) => T0 + i * SEC);
      const [r] = await s.fireCrons(
        [{ ...firing(cron, times), instances: times.map((t) => ({ ...planned('cu', t), outcome: 'caught_up' as const })) }],
        T0 + 10 * SEC,
      );
      expect(r.records.map((x) => x.outcome)).to.deep.equal(['caught_up', 'caught_up', 'caught_up']);
      expect(await Promise.all(times.map((t) => ctx.stateOf(cronInstanceId('cu', t))))).to.deep.equal(['PENDING', 'BLOCKED', 'BLOCKED']);
    });

    it('listCronFires pages latest first with the current state of each instance; deleting the cron drops them', async () => {
      const s = ctx.store();
      let cron = cronRecord('lf', { overlapPolicy: 'cancel_running' });
      await s.createCron(cron);
      for (let i = 1; i <= 5; i++) {
        await s.fireCrons([firing(cron, [T0 + i * SEC])], T0 + i * SEC);
        cron = (await s.getCron('lf')) as CronRecord;
      }
      const p1 = await s.listCronFires('lf', { limit: 3 });
      expect(p1.fires.map((f) => [f.fireTime - T0, f.taskState])).to.deep.equal([
        [5 * SEC, 'PENDING'],
        [4 * SEC, 'CANCELLED'],
        [3 * SEC, 'CANCELLED'],
      ]);
      const p2 = await s.listCronFires('lf', { limit: 3, cursor: p1.nextCursor as string });
      expect(p2.fires.map((f) => f.fireTime - T0)).to.deep.equal([2 * SEC, SEC]);
      expect(p2.nextCursor).to.equal(null);
      await s.deleteCron('lf');
      expect((await s.listCronFires('lf', { limit: 10 })).fires).to.deep.equal([]);
      expect(await ctx.stateOf(cronInstanceId('lf', T0 + 5 * SEC))).to.equal('PENDING'); // instances stay
    });

    it('purgeCronFires deletes fire records older than the cut-off, oldest first, at most the limit', async () => {
      const s = ctx.store();
      let cron = cronRecord('pf', { overlapPolicy: 'cancel_running' });
      await s.createCron(cron);
      for (let i = 1; i <= 5; i++) {
        await s.fireCrons([firing(cron, [T0 + i * SEC])], T0 + i * SEC);
        cron = (await s.getCron('pf')) as CronRecord;
      }
      expect(await s.purgeCronFires(T0 + 4 * SEC, 2)).to.equal(2);
      expect(await s.purgeCronFires(T0 + 4 * SEC, 10)).to.equal(1);
      expect((await s.listCronFires('pf', { limit: 10 })).fires.map((f) => f.fireTime - T0)).to.deep.equal([5 * SEC, 4 * SEC]);
      expect(await ctx.stateOf(cronInstanceId('pf', T0 + SEC))).to.equal('CANCELLED'); // instances stay
    });
  });
}
