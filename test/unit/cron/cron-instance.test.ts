import { expect } from 'chai';
import path from 'node:path';
import { loadConfig } from '../../../src/config';
import { buildCronInstance } from '../../../src/actors/cron/cron-instance';
import { CronRecord } from '../../../src/domain/cron/cron-definition';

const T = Date.UTC(2026, 5, 1, 12, 0, 0);

/** A cron definition as stored (the template was checked when it was saved). */
function cron(template: CronRecord['template']): CronRecord {
  return {
    id: 'c1',
    partition: 0,
    name: 'n',
    cronExpression: '* * * * *',
    timezone: 'UTC',
    template,
    tenantId: 'acme',
    overlapPolicy: 'skip',
    catchUp: 'none',
    maxCatchUp: 10,
    enabled: true,
    nextFireTime: T,
    lastFireTime: null,
    version: 1,
    createdAt: T,
    updatedAt: T,
  };
}

describe('buildCronInstance', () => {
  const config = loadConfig({
    configDir: path.resolve(__dirname, '..', '..', '..', '..', 'config'),
    env: {},
    overrides: { maxMetadataBytes: 100 },
  });

  it('a template saved before the metadata cap, with larger metadata, still fires (the cap is checked when a template is saved)', () => {
    const metadata = { note: 'm'.repeat(500) };
    const task = buildCronInstance(cron({ task_type: 'noop', metadata } as CronRecord['template']), T, T, config);
    expect(task).to.include({ id: 'cron-c1-' + T, tenantId: 'acme', state: 'PENDING', dueAt: T });
    expect(task.metadata).to.deep.equal(metadata);
  });
});
