import { expect } from 'chai';
import { SchedulerClient } from '../../src/client/scheduler-client';
import type { CronRunView } from '../../src/contract/cron-json';
import { RemoteSchedulerError } from '../../src/contract/error-catalog';
import { useInProcessScheduler } from '../helpers/in-process-scheduler';

/**
 * An actor in the scheduler's own actor system uses SchedulerClient (messages, not HTTP) to
 * submit, read, list and cancel, and gets the same validation errors as REST.
 */
describe('actor message API: SchedulerClient from an in-cluster actor', function () {
  this.timeout(30_000);
  const s = useInProcessScheduler({ workers: 1, workerConcurrency: 4, partitions: 4 });

  /** A caller actor: receives the API actor as a custom parameter and talks only through the client. */
  class CallerActor {
    private client: SchedulerClient | null = null;
    initialize(self: { getCustomParameters(): { api: any } }) {
      this.client = new SchedulerClient(self.getCustomParameters().api);
    }
    async runEcho(payload: unknown) {
      const client = this.client as SchedulerClient;
      const ack = await client.submit({ task_type: 'echo', payload });
      for (;;) {
        const t = await client.get(ack.task_id);
        if (t.status === 'SUCCEEDED') return t;
        await new Promise((r) => setTimeout(r, 10)); // waiting for the task's state, not for time
      }
    }
    async badSubmit() {
      try {
        await (this.client as SchedulerClient).submit({ task_type: 'echo', priority: 'urgent' });
        return null;
      } catch (err) {
        const e = err as RemoteSchedulerError;
        return { code: e.code, status: e.status, field: e.details.field, isRemote: err instanceof RemoteSchedulerError };
      }
    }
    /** Values JSON would not keep (the API actor gets this caller's objects as they are): the field named, nothing stored. */
    async nonJsonValues() {
      const client = this.client as SchedulerClient;
      const cycle: Record<string, unknown> = {};
      cycle.me = cycle;
      const tries: Array<() => Promise<unknown>> = [
        () => client.submit({ task_type: 'echo', payload: { n: Infinity } }),
        () => client.submitBatch({ tasks: [{ task_type: 'echo' }, { task_type: 'echo', metadata: { id: 10n } }] }),
        () => client.submit({ task_type: 'echo', payload: { m: new Map([['k', 'v']]) } }),
        () => client.submit({ task_type: 'echo', payload: cycle }),
        () => client.submitWorkflow({ tasks: [{ task_id: 'a', task_type: 'echo', payload: [NaN] }] }),
      ];
      const refused: unknown[] = [];
      for (const attempt of tries) {
        try {
          await attempt();
          refused.push(null);
        } catch (err) {
          const e = err as RemoteSchedulerError;
          refused.push({ code: e.code, status: e.status, field: e.details.field });
        }
      }
      const stored = (await client.list({ task_type: 'echo', limit: 100 })).tasks.length;
      const kept = await client.get(
        (await client.submit({ task_type: 'echo', payload: { at: new Date(0), left_out: undefined } })).task_id,
      );
      // Handed on as its JSON round trip: a function field is left out (it used to fail the store's
      // hand-off as a 500), an object's own toJSON is honoured, and a Date works as scheduled_at.
      const later = new Date(Date.now() + 3_600_000);
      const written = await client.get(
        (
          await client.submit({
            task_type: 'echo',
            scheduled_at: later,
            payload: { f: () => 1, custom: { toJSON: () => 'as written' }, keep: 1 },
          })
        ).task_id,
      );
      return {
        refused,
        stored,
        keptPayload: kept.payload,
        written: { payload: written.payload, scheduled_at: written.scheduled_at, later: later.toISOString() },
      };
    }
    async scheduleAndCancel() {
      const client = this.client as SchedulerClient;
      const ack = await client.submit({ task_type: 'noop', scheduled_at: new Date(Date.now() + 60_000).toISOString() });
      const cancelled = await client.cancel(ack.task_id);
      const listed = await client.list({ status: 'CANCELLED' });
      let missing: unknown = null;
      try {
        await client.get('no-such-task');
      } catch (err) {
        missing = (err as RemoteSchedulerError).code;
      }
      return { cancelled, listed: listed.tasks.map((t) => t.task_id), id: ack.task_id, missing };
    }
    async cronLifecycle() {
      const client = this.client as SchedulerClient;
      const cron = await client.createCron({ name: 'tick', cron_expression: '* * * * * *', task_type: 'noop' }, 2);
      const id = cron.cron_id as string;
      let runs: CronRunView[] = [];
      while (runs.length === 0) {
        runs = (await client.cronRuns(id)).runs;
        await new Promise((r) => setTimeout(r, 20)); // waiting for a fire record, not for time
      }
      const paused = await client.updateCron(id, { enabled: false });
      const got = await client.getCron(id, { preview: 3 });
      const listed = (await client.listCrons({ enabled: 'false' })).cron_tasks.map((c) => c.cron_id);
      const preview = await client.previewCron({ cron_expression: '0 0 29 2 *', from: '2026-01-01T00:00:00Z', count: 2 });
      let bad: unknown = null;
      try {
        await client.createCron({ name: 'x', cron_expression: '* * *', task_type: 'noop' });
      } catch (err) {
        bad = { code: (err as RemoteSchedulerError).code, field: (err as RemoteSchedulerError).details.field };
      }
      await client.deleteCron(id);
      let missing: unknown = null;
      try {
        await client.getCron(id);
      } catch (err) {
        missing = (err as RemoteSchedulerError).code;
      }
      return { cron, runs, paused, got, listed, preview, bad, missing };
    }
    async tenantAdmin() {
      const client = this.client as SchedulerClient;
      const tenant = await client.putTenant('acme', { weight: 2 });
      const limit = await client.putRateLimit('echo', { rate_per_second: 50 });
      const tenants = await client.listTenants();
      const limits = await client.listRateLimits();
      await client.deleteRateLimit('echo');
      const deleted = await client.deleteTenant('acme');
      return { tenant, limit, tenants, limits, after: await client.listRateLimits(), deleted, tenantsAfter: await client.listTenants() };
    }
  }

  it('submits, waits for SUCCEEDED, lists, cancels and gets catalog errors', async () => {
    const caller = await s.scheduler.runtime.root.createChild(CallerActor, {
      mode: 'in-memory',
      name: 'caller',
      customParameters: { api: s.scheduler.apiActor },
    });
    const t = await caller.sendAndReceive('runEcho', { hello: 'actors' });
    expect(t).to.include({ status: 'SUCCEEDED', attempts: 1 });
    expect(t.result).to.deep.equal({ hello: 'actors' });

    const bad = await caller.sendAndReceive('badSubmit');
    expect(bad).to.deep.equal({ code: 'VALIDATION_FAILED', status: 400, field: 'priority', isRemote: true });

    const r = await caller.sendAndReceive('scheduleAndCancel');
    expect(r.cancelled).to.include({ status: 'CANCELLED' });
    expect(r.listed).to.include(r.id);
    expect(r.missing).to.equal('TASK_NOT_FOUND');
    await caller.destroy();
  });

  it('refuses values JSON would not keep (Infinity, a bigint, a Map, a cycle, NaN), naming the field, and stores nothing', async () => {
    const caller = await s.scheduler.runtime.root.createChild(CallerActor, {
      mode: 'in-memory',
      name: 'json-caller',
      customParameters: { api: s.scheduler.apiActor },
    });
    const before = (await s.scheduler.service.list({ task_type: 'echo', limit: 100 })).tasks.length;
    const r = await caller.sendAndReceive('nonJsonValues');
    const refusal = (field: string) => ({ code: 'VALIDATION_FAILED', status: 400, field });
    expect(r.refused).to.deep.equal([
      refusal('payload.n'),
      refusal('tasks[1].metadata.id'),
      refusal('payload.m'),
      refusal('payload.me'),
      refusal('tasks[0].payload[0]'),
    ]);
    expect(r.stored).to.equal(before);
    expect(r.keptPayload).to.deep.equal({ at: '1970-01-01T00:00:00.000Z' });
    expect(r.written.payload).to.deep.equal({ custom: 'as written', keep: 1 });
    expect(r.written.scheduled_at).to.equal(r.written.later);
    await caller.destroy();
  });

  it('creates, reads, pauses, lists, previews and deletes cron tasks, with catalog errors', async () => {
    const caller = await s.scheduler.runtime.root.createChild(CallerActor, {
      mode: 'in-memory',
      name: 'cron-caller',
      customParameters: { api: s.scheduler.apiActor },
    });
    const r = await caller.sendAndReceive('cronLifecycle');
    expect(r.cron.next_fire_times).to.have.length(2);
    expect(r.runs[0]).to.include({ outcome: 'created' });
    expect(r.paused).to.include({ enabled: false, next_fire_time: null });
    expect(r.got.next_fire_times).to.deep.equal([]);
    expect(r.listed).to.deep.equal([r.cron.cron_id]);
    expect(r.preview.fire_times).to.deep.equal(['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z']);
    expect(r.bad).to.deep.equal({ code: 'VALIDATION_FAILED', field: 'cron_expression' });
    expect(r.missing).to.equal('CRON_NOT_FOUND');
    await caller.destroy();
  });

  it('sets tenant weights and rate limits by message', async () => {
    const caller = await s.scheduler.runtime.root.createChild(CallerActor, {
      mode: 'in-memory',
      name: 'admin-caller',
      customParameters: { api: s.scheduler.apiActor },
    });
    const r = await caller.sendAndReceive('tenantAdmin');
    expect(r.tenant).to.deep.equal({ tenant_id: 'acme', weight: 2, rate_limit: null });
    expect(r.limit).to.deep.equal({ task_type: 'echo', rate_per_second: 50, burst: 1 });
    expect(r.tenants.tenants).to.deep.include({ tenant_id: 'acme', weight: 2, rate_limit: null });
    expect(r.limits.rate_limits).to.deep.equal([{ task_type: 'echo', rate_per_second: 50, burst: 1 }]);
    expect(r.after.rate_limits).to.deep.equal([]);
    expect(r.deleted).to.deep.equal({ tenant_id: 'acme', deleted: true, weight: 1, rate_limit: null });
    expect(r.tenantsAfter.tenants.map((t: { tenant_id: string }) => t.tenant_id)).not.to.include('acme');
    await caller.destroy();
  });
});
