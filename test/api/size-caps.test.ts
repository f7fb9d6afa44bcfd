import { expect } from 'chai';
import type { Config } from '../../src/config';
import { apiFixture, ApiFixture, sendJson } from '../helpers/api-fixture';
import { TEST_KEYS as KEYS, testApiKeys as apiKeys } from '../helpers/api-keys';

/** Nothing reached the store (and, for submissions, no owner was told). */
async function expectNothingStored(f: ApiFixture): Promise<void> {
  const counts = await f.store.countByState();
  expect(Object.values(counts).reduce((a, b) => a + b, 0)).to.equal(0);
  expect(f.stored).to.have.length(0);
}

/** The config a fixture gets without overrides (config/default.json). */
async function defaultConfig(): Promise<Config> {
  const d = await apiFixture();
  try {
    return d.config;
  } finally {
    await d.close();
  }
}

/** `maxPayloadBytes`: a payload whose JSON is larger → 413 PAYLOAD_TOO_LARGE naming it; nothing stored. */
describe('REST: payload size cap', () => {
  let f: ApiFixture;
  const CAP = 1000;
  beforeEach(async () => {
    f = await apiFixture({ maxPayloadBytes: CAP, bodyLimitBytes: 64 * 1024 });
  });
  afterEach(async () => f.close());

  const post = (url: string, body: unknown) => sendJson(f, 'POST', url, body);

  /** A string payload whose JSON text is exactly `bytes` bytes (the two quotes included). */
  const payloadOf = (bytes: number) => 'p'.repeat(bytes - 2);

  it('defaults to 256 KiB', async () => {
    expect(f.config.maxPayloadBytes).to.equal(CAP);
    expect((await defaultConfig()).maxPayloadBytes).to.equal(262_144);
  });

  it('one task: a payload one byte over the cap → 413, field payload, both sizes; nothing stored', async () => {
    const res = await post('/api/v1/tasks', { task_type: 'echo', payload: payloadOf(CAP + 1) });
    expect(res.statusCode, res.body).to.equal(413);
    const err = res.json().error;
    expect(err.code).to.equal('PAYLOAD_TOO_LARGE');
    expect(err.details).to.deep.equal({ field: 'payload', limit_bytes: CAP, actual_bytes: CAP + 1 });
    expect(err.message)
      .to.contain(String(CAP))
      .and.to.contain(String(CAP + 1));
    await expectNothingStored(f);
  });

  it('one task: a payload exactly at the cap, or none at all, is accepted', async () => {
    expect((await post('/api/v1/tasks', { task_type: 'echo', payload: payloadOf(CAP) })).statusCode).to.equal(202);
    expect((await post('/api/v1/tasks', { task_type: 'echo' })).statusCode).to.equal(202);
    expect((await f.store.countByState()).PENDING).to.equal(2);
  });

  it('counts UTF-8 bytes of the JSON text: multi-byte characters and nested objects', async () => {
    const euros = '€'.repeat(Math.ceil(CAP / 3)); // 3 bytes each: over the cap, though fewer characters
    const res = await post('/api/v1/tasks', { task_type: 'echo', payload: { text: euros } });
    expect(res.statusCode).to.equal(413);
    expect(res.json().error.details.field).to.equal('payload');
    expect(res.json().error.details.actual_bytes).to.equal(Buffer.byteLength(JSON.stringify({ text: euros }), 'utf8'));
    await expectNothingStored(f);
  });

  it('batch: one item over the cap → 413 naming tasks[i].payload; no item stored', async () => {
    const res = await post('/api/v1/tasks/batch', {
      tasks: [
        { task_type: 'echo', payload: 'small' },
        { task_type: 'echo', payload: payloadOf(CAP) },
        { task_type: 'echo', payload: { big: payloadOf(CAP) } },
      ],
    });
    expect(res.statusCode, res.body).to.equal(413);
    expect(res.json().error.code).to.equal('PAYLOAD_TOO_LARGE');
    expect(res.json().error.details).to.include({ field: 'tasks[2].payload', limit_bytes: CAP });
    await expectNothingStored(f);
  });

  it('batch: every item within the cap → 202, all stored', async () => {
    const res = await post('/api/v1/tasks/batch', {
      tasks: [
        { task_type: 'echo', payload: payloadOf(CAP) },
        { task_type: 'echo', payload: payloadOf(CAP) },
      ],
    });
    expect(res.statusCode, res.body).to.equal(202);
    expect((await f.store.countByState()).PENDING).to.equal(2);
  });

  it('a body over bodyLimitBytes is still refused as a whole (field body)', async () => {
    const res = await post('/api/v1/tasks', { task_type: 'echo', payload: 'x'.repeat(70 * 1024) });
    expect(res.statusCode).to.equal(413);
    expect(res.json().error.details).to.deep.equal({ field: 'body', limit_bytes: 64 * 1024 });
    await expectNothingStored(f);
  });
});

/**
 * `maxMetadataBytes`: task metadata whose JSON is larger → 413 naming it; a workflow's own
 * metadata under its own name, also once copied into every task (`workflowBodyLimitBytes`).
 */
describe('REST: metadata size cap', () => {
  let f: ApiFixture;
  const CAP = 200;
  const WORKFLOW_LIMIT = 64 * 1024;
  beforeEach(async () => {
    f = await apiFixture({ maxMetadataBytes: CAP, workflowBodyLimitBytes: WORKFLOW_LIMIT });
  });
  afterEach(async () => f.close());

  const post = (url: string, body: unknown) => sendJson(f, 'POST', url, body);
  /** Metadata whose JSON text is exactly `bytes` bytes. */
  const metadataOf = (bytes: number) => ({ note: 'm'.repeat(bytes - '{"note":""}'.length) });
  /** What the stored metadata adds to what is sent without a tenant or correlation id (read back with both). */
  const ADDED = ',"tenant_id":"default","correlation_id":null'.length;
  /** Metadata whose stored JSON text (with the default tenant and a null correlation id) is exactly `bytes` bytes. */
  const storedOf = (bytes: number) => metadataOf(bytes - ADDED);

  it('defaults to 16 KiB', async () => {
    expect((await defaultConfig()).maxMetadataBytes).to.equal(16_384);
  });

  it('one task and a batch item: over the cap as stored → 413 naming metadata with both sizes; at the cap → 202', async () => {
    const one = await post('/api/v1/tasks', { task_type: 'noop', metadata: storedOf(CAP + 1) });
    expect(one.statusCode, one.body).to.equal(413);
    expect(one.json().error).to.deep.include({
      code: 'PAYLOAD_TOO_LARGE',
      details: { field: 'metadata', limit_bytes: CAP, actual_bytes: CAP + 1 },
    });
    const batch = await post('/api/v1/tasks/batch', {
      tasks: [{ task_type: 'noop' }, { task_type: 'noop', metadata: storedOf(CAP + 1) }],
    });
    expect(batch.statusCode).to.equal(413);
    expect(batch.json().error.details.field).to.equal('tasks[1].metadata');
    await expectNothingStored(f);
    expect((await post('/api/v1/tasks', { task_type: 'noop', metadata: storedOf(CAP) })).statusCode).to.equal(202);
  });

  it('counts the metadata as stored and read back, whoever submits: no key, an admin key, a tenant key (batch, workflow, cron too)', async () => {
    // Sent: CAP bytes, under the old count (the body's text) for the open API and an admin key.
    const sent = metadataOf(CAP);
    const open = await post('/api/v1/tasks', { task_type: 'noop', metadata: sent });
    expect(open.statusCode, open.body).to.equal(413);
    expect(open.json().error.details).to.deep.equal({ field: 'metadata', limit_bytes: CAP, actual_bytes: CAP + ADDED });
    const batch = await post('/api/v1/tasks/batch', { tasks: [{ task_type: 'noop', metadata: sent }] });
    expect(batch.statusCode, batch.body).to.equal(413);
    expect(batch.json().error.details.field).to.equal('tasks[0].metadata');
    const workflow = await post('/api/v1/workflows', { metadata: sent, tasks: [{ task_id: 'a', task_type: 'noop' }] });
    expect(workflow.statusCode, workflow.body).to.equal(413);
    expect(workflow.json().error.details).to.include({ field: 'metadata', actual_bytes: CAP + ADDED });
    const cron = await post('/api/v1/cron-tasks', { name: 'c', cron_expression: '0 0 * * *', task_type: 'noop', metadata: sent });
    expect(cron.statusCode, cron.body).to.equal(413);
    expect(cron.json().error.details.field).to.equal('metadata');
    await expectNothingStored(f);

    const keyed = await apiFixture({ maxMetadataBytes: CAP, apiKeys });
    try {
      const as = (key: string, meta: unknown) =>
        keyed.app.inject({
          method: 'POST',
          url: '/api/v1/tasks',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
          payload: JSON.stringify({ task_type: 'noop', metadata: meta }),
        });
      const admin = await as(KEYS.admin, sent);
      expect(admin.statusCode, admin.body).to.equal(413);
      expect(admin.json().error.details.actual_bytes).to.equal(CAP + ADDED);
      // A tenant's key: its tenant_id ("acme") is added, and the null correlation_id counted too.
      const tenantAdded = ',"tenant_id":"acme","correlation_id":null'.length;
      const tenant = await as(KEYS.acme, metadataOf(CAP - tenantAdded + 1));
      expect(tenant.statusCode, tenant.body).to.equal(413);
      expect(tenant.json().error.details.actual_bytes).to.equal(CAP + 1);
      // At the cap as stored: accepted, and read back at exactly the cap.
      for (const [key, meta] of [
        [KEYS.admin, storedOf(CAP)],
        [KEYS.acme, metadataOf(CAP - tenantAdded)],
      ] as const) {
        const res = await as(key, meta);
        expect(res.statusCode, res.body).to.equal(202);
        const read = await keyed.app.inject({
          method: 'GET',
          url: `/api/v1/tasks/${res.json().task_id}`,
          headers: { authorization: `Bearer ${KEYS.admin}` },
        });
        expect(Buffer.byteLength(JSON.stringify(read.json().metadata))).to.equal(CAP);
      }
    } finally {
      await keyed.close();
    }
  });

  it("workflow: its own metadata is checked under 'metadata' (size and depth), and a task's overlay under tasks[i].metadata", async () => {
    const tasks = [{ task_id: 'a', task_type: 'noop' }];
    const big = await post('/api/v1/workflows', { metadata: metadataOf(CAP + 1), tasks });
    expect(big.statusCode).to.equal(413);
    expect(big.json().error.details).to.include({ field: 'metadata', limit_bytes: CAP });
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 70; i++) deep = { d: deep };
    const nested = await post('/api/v1/workflows', { metadata: deep, tasks });
    expect(nested.statusCode).to.equal(400);
    expect(nested.json().error.details.field).to.equal('metadata');
    const overlay = await post('/api/v1/workflows', {
      metadata: storedOf(CAP - 20),
      tasks: [{ task_id: 'a', task_type: 'noop', metadata: { more: 'x'.repeat(40) } }],
    });
    expect(overlay.statusCode).to.equal(413);
    expect(overlay.json().error.details.field).to.equal('tasks[0].metadata');
    await expectNothingStored(f);
  });

  it('workflow: metadata copied into every task may not total more than workflowBodyLimitBytes', async () => {
    const meta = storedOf(100);
    const many = Array.from({ length: 700 }, (_, i) => ({ task_id: `t${i}`, task_type: 'noop' }));
    const res = await post('/api/v1/workflows', { metadata: meta, tasks: many });
    expect(res.statusCode, res.body).to.equal(413);
    expect(res.json().error.details).to.deep.equal({ field: 'metadata', limit_bytes: WORKFLOW_LIMIT, actual_bytes: 100 * 700 });
    expect(res.json().error.message).to.include('copied into each of the 700 tasks');
    await expectNothingStored(f);
    expect((await post('/api/v1/workflows', { metadata: meta, tasks: many.slice(0, 600) })).statusCode).to.equal(202);
  });
});
