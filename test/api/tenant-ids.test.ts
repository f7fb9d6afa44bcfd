import { expect } from 'chai';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { isTenantId } from '../../src/domain/tenant-id';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { requestAs, TEST_KEYS as KEYS, testApiKeys as apiKeys } from '../helpers/api-keys';

const CONFIG_DIR = path.resolve(__dirname, '..', '..', '..', 'config');
const BAD_IDS = ['a/b', '../x', 'a..b', 'a b', 'tab\tx', 'nul\u0000x', 'new\nline', '_other', '.hidden', '-dash', 'ü', 'a'.repeat(201), ''];
const GOOD_IDS = ['acme', 'acme-corp', 'org:team.1', 'A_b@c', 'default', 'a'.repeat(200), '7'];

describe('tenant ids: one syntax wherever a tenant id enters', () => {
  it('the syntax: letters, digits and . _ : @ -, starting alphanumeric, 1-200 characters, no ".."', () => {
    for (const id of GOOD_IDS) expect(isTenantId(id), id).to.equal(true);
    for (const id of BAD_IDS) expect(isTenantId(id), JSON.stringify(id)).to.equal(false);
  });

  describe('REST', () => {
    let f: ApiFixture;
    beforeEach(async () => {
      f = await apiFixture({ apiKeys });
    });
    afterEach(async () => f.close());
    const as = requestAs(() => f);

    it('a submission, a batch item, a workflow and a cron template with a bad metadata.tenant_id: 400 naming the field', async () => {
      for (const id of BAD_IDS.filter((i) => i !== '')) {
        const one = await as(KEYS.admin, 'POST', '/api/v1/tasks', { task_type: 'noop', metadata: { tenant_id: id } });
        expect(one.statusCode, JSON.stringify(id)).to.equal(400);
        expect(one.json().error.code).to.equal('VALIDATION_FAILED');
        expect(one.json().error.details.field).to.equal('metadata.tenant_id');
        expect(one.json().error.details.reason).to.contain('letters, digits');
      }
      const batch = await as(KEYS.admin, 'POST', '/api/v1/tasks/batch', {
        tasks: [{ task_type: 'noop' }, { task_type: 'noop', metadata: { tenant_id: '../etc' } }],
      });
      expect(batch.json().error.details.field).to.equal('tasks[1].metadata.tenant_id');
      const workflow = await as(KEYS.admin, 'POST', '/api/v1/workflows', {
        metadata: { tenant_id: 'a/b' },
        tasks: [{ task_id: 'x', task_type: 'noop' }],
      });
      expect(workflow.statusCode).to.equal(400);
      expect(workflow.json().error.details.field).to.equal('metadata.tenant_id');
      const cron = await as(KEYS.admin, 'POST', '/api/v1/cron-tasks', {
        name: 'n',
        cron_expression: '0 9 * * *',
        task_type: 'noop',
        metadata: { tenant_id: 'a..b' },
      });
      expect(cron.statusCode).to.equal(400);
      expect(cron.json().error.details.field).to.equal('metadata.tenant_id');
      expect(await f.store.countWaitingByTenant()).to.deep.equal({});
      for (const id of GOOD_IDS) {
        const ok = await as(KEYS.admin, 'POST', '/api/v1/tasks', { task_type: 'noop', metadata: { tenant_id: id } });
        expect(ok.statusCode, id).to.equal(202);
      }
    });

    it('PUT and DELETE /api/v1/tenants/{id} with a bad id: 400 naming `id`, nothing stored', async () => {
      for (const id of ['a..b', 'a%2E%2Eb', '_other', 'a%20b', 'x%0Ay', `${'a'.repeat(201)}`]) {
        for (const [method, body] of [
          ['PUT', { weight: 2 }],
          ['DELETE', undefined],
        ] as const) {
          const res = await as(KEYS.admin, method, `/api/v1/tenants/${id}`, body);
          expect(res.statusCode, `${method} ${id}`).to.equal(400);
          expect(res.json().error.details.field, `${method} ${id}`).to.equal('id');
        }
      }
      expect(await f.store.listTenantSettings()).to.deep.equal([]);
    });
  });

  it('the config refuses a bad tenant id in apiKeys, tenants and defaults, naming the key', () => {
    const load = (overrides: Record<string, unknown>) => () => loadConfig({ configDir: CONFIG_DIR, env: {}, overrides });
    expect(load({ apiKeys: [{ sha256: 'a'.repeat(64), tenant: 'a/b' }] }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.matches(/^invalid configuration: apiKeys\.0\.tenant: must be 1 to 200 characters/);
    expect(load({ tenants: { '../x': { weight: 2 } } }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.matches(/^invalid configuration: tenants\.\.\.\/x/);
    expect(load({ defaults: { tenantId: 'a b' } }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.matches(/^invalid configuration: defaults\.tenantId: must be/);
    expect(load({ apiKeys: [{ sha256: 'a'.repeat(64), tenant: 'acme-corp' }], tenants: { 'org:team.1': { weight: 2 } } })).not.to.throw();
  });
});
