import { expect } from 'chai';
import pino from 'pino';
import { Registry } from 'prom-client';
import { channelNames, encodeMessage, NOTIFY_PAYLOAD_LIMIT } from '../../src/cluster/postgres/notify-payload';
import { NotifyConnection, PostgresBus } from '../../src/cluster/postgres/pg-bus';
import { PgCoordinationMetrics } from '../../src/cluster/postgres/pg-coordination-metrics';
import { CoordinationMessages, parseMessage } from '../../src/cluster/messages';
import type { DueEntry } from '../../src/domain/task';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

const entry = (id: string, partition = 3, tenantId = 't1'): DueEntry => ({
  id,
  partition,
  seq: 7,
  dueAt: 1_700_000_000_123,
  priority: 'medium',
  tenantId,
  taskType: 'email.send',
  state: 'PENDING',
});

describe('PostgreSQL NOTIFY channels and payloads (split to fit 8000 bytes)', () => {
  it('names one channel per message kind, namespaced by the schema, at most 63 bytes', () => {
    expect(channelNames('public')).to.deep.equal({
      wake: 'scheduler.public.wake',
      cancel: 'scheduler.public.cancel',
      ended: 'scheduler.public.ended',
      limits: 'scheduler.public.limits',
      left: 'scheduler.public.left',
      cron: 'scheduler.public.cron',
      pull: 'scheduler.public.pull',
      unpull: 'scheduler.public.unpull',
      grant: 'scheduler.public.grant',
    });
    expect(channelNames('tenant_a').wake).to.not.equal(channelNames('tenant_b').wake);
    const long = 'a'.repeat(63);
    const names = channelNames(long);
    expect(Object.values(names).every((n) => bytes(n) <= 63)).to.equal(true);
    expect(names.wake).to.not.equal(channelNames('b'.repeat(63)).wake);
    expect(() => channelNames('Public; DROP')).to.throw(/invalid PostgreSQL schema name/);
  });

  it('a message that fits is one payload, the JSON the Redis bus sends', () => {
    const msg: CoordinationMessages['wake'] = { from: 'node-a', partition: 3, entries: [entry('t-1'), entry('t-2')] };
    expect(encodeMessage('wake', msg)).to.deep.equal({ payloads: [JSON.stringify(msg)], oversize: 0 });
    const cancel = { from: 'node-a', taskId: 't-9', attempt: 2 };
    expect(encodeMessage('cancel', cancel).payloads.map((p) => parseMessage('cancel', p))).to.deep.equal([cancel]);
    const limits = { from: 'node-a' };
    expect(encodeMessage('limits', limits).payloads.map((p) => parseMessage('limits', p))).to.deep.equal([limits]);
    expect(parseMessage('limits', '{}'), 'a message names its sender').to.equal(null);
    expect(encodeMessage('left', limits).payloads.map((p) => parseMessage('left', p))).to.deep.equal([limits]);
    expect(parseMessage('left', '{"from": ""}')).to.equal(null);
    const cron = { from: 'node-a', cronId: 'c-1' };
    expect(encodeMessage('cron', cron).payloads.map((p) => parseMessage('cron', p))).to.deep.equal([cron]);
    expect(parseMessage('cron', '{"from": "node-a"}'), 'names its cron').to.equal(null);
    const empty = { from: 'node-a', partition: 1, entries: [] };
    expect(encodeMessage('wake', empty).payloads.map((p) => parseMessage('wake', p))).to.deep.equal([empty]);
  });

  it('a large wake is split into wakes of the same partition, each within the limit, together the entries in order', () => {
    const entries = Array.from({ length: 500 }, (_, i) => entry(`task-${i}-${'x'.repeat(i % 40)}`));
    const { payloads, oversize } = encodeMessage('wake', { from: 'node-a', partition: 3, entries });
    expect(oversize).to.equal(0);
    expect(payloads.length).to.be.greaterThan(1);
    const parts = payloads.map((p) => {
      expect(bytes(p)).to.be.at.most(NOTIFY_PAYLOAD_LIMIT);
      const m = parseMessage('wake', p);
      expect(m, 'each part is a valid wake').to.not.equal(null);
      expect(m!.partition).to.equal(3);
      expect(m!.from).to.equal('node-a');
      return m!.entries;
    });
    expect(parts.flat()).to.deep.equal(entries);
    // Greedy packing: no two neighbouring parts would have fitted in one.
    for (let i = 1; i < payloads.length; i++)
      expect(bytes(payloads[i - 1]) + JSON.stringify(parts[i][0]).length + 1).to.be.above(NOTIFY_PAYLOAD_LIMIT);
  });

  it('counts UTF-8 bytes, not characters (multi-byte ids), at any limit', () => {
    const entries = Array.from({ length: 60 }, (_, i) => entry(`tâche-${i}`, 0, 'locataire-é€😀'));
    for (const limit of [400, 1000, 2345]) {
      const { payloads } = encodeMessage('wake', { from: 'n', partition: 0, entries }, limit);
      expect(payloads.every((p) => bytes(p) <= limit)).to.equal(true);
      expect(payloads.flatMap((p) => parseMessage('wake', p)!.entries)).to.deep.equal(entries);
    }
  });

  it('an ended message is split across its task and workflow ids', () => {
    const taskIds = Array.from({ length: 900 }, (_, i) => `task-${i}`);
    const workflowIds = Array.from({ length: 300 }, (_, i) => `wf-${i}`);
    const { payloads } = encodeMessage('ended', { from: 'node-b', taskIds, workflowIds }, 1000);
    expect(payloads.length).to.be.greaterThan(10);
    const parts = payloads.map((p) => parseMessage('ended', p)!);
    expect(parts.every((m) => m !== null && bytes(JSON.stringify(m)) <= 1000)).to.equal(true);
    expect(parts.flatMap((m) => m.taskIds)).to.deep.equal(taskIds);
    expect(parts.flatMap((m) => m.workflowIds)).to.deep.equal(workflowIds);
  });

  it('pull traffic: pull and unpull fit one payload; a grant is split by its grants, each part a whole grant', () => {
    const pull = { from: 'n1', waiterId: 'w-1', queue: 'jobs', max: 10, waitMs: 20_000 };
    expect(encodeMessage('pull', pull).payloads.map((p) => parseMessage('pull', p))).to.deep.equal([pull]);
    const unpull = { from: 'n1', waiterId: 'w-1' };
    expect(encodeMessage('unpull', unpull).payloads.map((p) => parseMessage('unpull', p))).to.deep.equal([unpull]);
    const grants = Array.from({ length: 100 }, (_, i) => ({ entry: { ...entry(`task-${i}`, i % 4), queue: 'jobs' }, epoch: 3 + (i % 4) }));
    const { payloads, oversize } = encodeMessage('grant', { from: 'n2', to: 'n1', waiterId: 'w-1', queue: 'jobs', grants }, 2000);
    expect(oversize).to.equal(0);
    expect(payloads.length).to.be.greaterThan(3);
    const parts = payloads.map((p) => parseMessage('grant', p)!);
    expect(parts.every((m) => m !== null && m.to === 'n1' && m.waiterId === 'w-1' && m.queue === 'jobs')).to.equal(true);
    expect(parts.flatMap((m) => m.grants)).to.deep.equal(grants);
  });

  it('pull traffic of the wrong shape is dropped', () => {
    const bad: Array<[keyof CoordinationMessages, unknown]> = [
      ['pull', { from: 'n', waiterId: 'w', queue: 'q', max: 0, waitMs: 1000 }],
      ['pull', { from: 'n', waiterId: 'w', queue: 'q', max: 1001, waitMs: 1000 }],
      ['pull', { from: 'n', waiterId: 'w', queue: 'q', max: 1, waitMs: -1 }],
      ['pull', { from: 'n', waiterId: '', queue: 'q', max: 1, waitMs: 1 }],
      ['unpull', { from: 'n' }],
      ['grant', { from: 'n', to: 'm', waiterId: 'w', queue: 'q', grants: [{ entry: entry('a'), epoch: 1.5 }] }],
      ['grant', { from: 'n', to: 'm', waiterId: 'w', queue: 'q', grants: [{ entry: { ...entry('a'), state: 'NOPE' }, epoch: 1 }] }],
      ['grant', { from: 'n', waiterId: 'w', queue: 'q', grants: [] }],
    ];
    for (const [channel, msg] of bad) expect(parseMessage(channel, JSON.stringify(msg)), JSON.stringify(msg)).to.equal(null);
  });

  it('an item that alone exceeds the limit is left out and counted; the others still go', () => {
    const huge = entry('y'.repeat(1000), 2, '€'.repeat(1000)); // 3000 bytes of tenant id alone
    const { payloads, oversize } = encodeMessage('wake', { from: 'n', partition: 2, entries: [entry('a', 2), huge, entry('b', 2)] }, 2000);
    expect(oversize).to.equal(1);
    expect(payloads.flatMap((p) => parseMessage('wake', p)!.entries.map((e) => e.id))).to.deep.equal(['a', 'b']);
    expect(encodeMessage('cancel', { from: 'n', taskId: '\u0001'.repeat(1000), attempt: 1 }, 2000)).to.deep.equal({
      payloads: [],
      oversize: 1,
    });
  });
});

/** A connection that records the statements, answering each when told. */
class FakeConnection implements NotifyConnection {
  up = true;
  readonly statements: Array<{ channels: string[]; payloads: string[]; answer: (ok: boolean) => void }> = [];
  private notify: ((channel: string, payload: string) => void) | null = null;
  async start(): Promise<boolean> {
    return this.up;
  }
  onNotification(fn: (channel: string, payload: string) => void): void {
    this.notify = fn;
  }
  /** Delivers a notification as the server would. */
  deliver(channel: string, payload: string): void {
    this.notify?.(channel, payload);
  }
  query(_text: string, values?: unknown[]): Promise<never> {
    const [channels, payloads] = values as [string[], string[]];
    return new Promise((resolve, reject) =>
      this.statements.push({
        channels,
        payloads,
        answer: (ok) => (ok ? resolve({ rows: [] } as never) : reject(new Error('connection lost'))),
      }),
    );
  }
}

describe('PostgresBus (fake connection)', () => {
  const log = pino({ level: 'silent' });
  const metricsText = async (r: Registry) => r.metrics();

  it('messages published while a statement is out go together in the next one; callers learn what was sent', async () => {
    const conn = new FakeConnection();
    const registry = new Registry();
    const bus = new PostgresBus(conn, 'node-a', log, new PgCoordinationMetrics(registry), { schema: 's1' });
    const first = bus.publish('cancel', { taskId: 't-1', attempt: 1 });
    const second = bus.publish('cancel', { taskId: 't-2', attempt: 1 });
    const third = bus.publish('wake', { partition: 0, entries: [entry('e', 0)] });
    expect(conn.statements).to.have.length(1); // the first alone; the others wait for it
    expect(conn.statements[0].channels).to.deep.equal(['scheduler.s1.cancel']);
    conn.statements[0].answer(true);
    expect(await first).to.equal(1);
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(conn.statements).to.have.length(2);
    expect(conn.statements[1].channels).to.deep.equal(['scheduler.s1.cancel', 'scheduler.s1.wake']);
    conn.statements[1].answer(false); // the statement failed: both dropped
    expect([await second, await third]).to.deep.equal([0, 0]);
    const text = await metricsText(registry);
    expect(text).to.match(/scheduler_postgres_messages_total\{channel="cancel",direction="published"\} 1/);
    expect(text).to.match(/scheduler_postgres_messages_total\{channel="cancel",direction="dropped"\} 1/);
    expect(text).to.match(/scheduler_postgres_messages_total\{channel="wake",direction="dropped"\} 1/);
  });

  it('drops at once while the connection is down, and when the queue is full; never throws', async () => {
    const conn = new FakeConnection();
    const bus = new PostgresBus(conn, 'node-a', log, undefined, { maxQueued: 3, payloadLimit: 1000 });
    conn.up = false;
    expect(await bus.publish('cancel', { taskId: 't', attempt: 1 })).to.equal(0);
    expect(conn.statements).to.have.length(0);
    conn.up = true;
    const entries = Array.from({ length: 40 }, (_, i) => entry(`e-${i}`, 1)); // ~8 parts of 1000 bytes
    expect(await bus.publish('wake', { partition: 1, entries })).to.equal(0); // more than the queue holds
    const ok = bus.publish('wake', { partition: 1, entries: entries.slice(0, 3) });
    conn.statements[0].answer(true);
    expect(await ok).to.equal(1);
  });

  it('delivers other nodes’ messages to the handlers; its own and malformed ones are dropped', () => {
    const conn = new FakeConnection();
    const registry = new Registry();
    const bus = new PostgresBus(conn, 'node-a', log, new PgCoordinationMetrics(registry));
    const got: unknown[] = [];
    bus.on('cancel', (m) => got.push(m));
    conn.deliver('scheduler.public.cancel', JSON.stringify({ from: 'node-a', taskId: 'mine', attempt: 1 }));
    conn.deliver('scheduler.public.cancel', '{oops');
    conn.deliver('scheduler.other.cancel', JSON.stringify({ from: 'node-b', taskId: 'other-schema', attempt: 1 }));
    conn.deliver('scheduler.public.cancel', JSON.stringify({ from: 'node-b', taskId: 't-7', attempt: 2 }));
    expect(got).to.deep.equal([{ from: 'node-b', taskId: 't-7', attempt: 2 }]);
  });
});
