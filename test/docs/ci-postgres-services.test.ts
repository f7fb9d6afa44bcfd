import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(__dirname, '..', '..', '..');
const script = path.join(root, '.ci', 'postgres-services.sh');

/** CI_PG_SERVICE_FILES of .ci/postgres-services.sh, as bash reads it. */
function listedFiles(): string[] {
  const run = spawnSync('bash', ['-c', `source ${JSON.stringify(script)}; printf '%s\\n' "\${CI_PG_SERVICE_FILES[@]}"`], {
    encoding: 'utf8',
  });
  expect(run.status, run.stderr).to.equal(0);
  return run.stdout.split('\n').filter(Boolean);
}

/** The PostgreSQL run of the single-node service tests (.ci/run, .ci/postgres-services.sh). */
describe('CI: the single-node service tests on PostgreSQL (.ci/postgres-services.sh)', () => {
  it('.ci/run sources the script and runs it', () => {
    const run = fs.readFileSync(path.join(root, '.ci', 'run'), 'utf8');
    expect(run).to.match(/^source \.ci\/postgres-services\.sh$/m);
    expect(run).to.match(/^ci_postgres_services_suite /m);
  });

  it('every listed file exists, and every single-node integration file is listed or named as left out', () => {
    const listed = listedFiles();
    for (const f of listed) expect(fs.existsSync(path.join(root, 'test', `${f}.test.ts`)), f).to.equal(true);
    const text = fs.readFileSync(script, 'utf8');
    const header = text.slice(0, text.indexOf('CI_PG_SERVICE_FILES=('));
    const integration = fs
      .readdirSync(path.join(root, 'test', 'integration'))
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => f.replace(/\.test\.ts$/, ''))
      .filter((f) => !f.startsWith('cluster-') && !f.startsWith('mongo-'));
    const unaccounted = integration.filter((f) => !listed.includes(`integration/${f}`) && !new RegExp(`\\b${f}\\b`).test(header));
    expect(unaccounted, 'neither run on PostgreSQL nor said why not (the script header)').to.deep.equal([]);
  });
});
