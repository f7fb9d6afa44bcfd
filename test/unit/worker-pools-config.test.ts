import { expect } from 'chai';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { poolSpecs, workerIdOf } from '../../src/actors/dispatcher/pool-specs';

const CONFIG_DIR = path.resolve(__dirname, '..', '..', '..', 'config');
const load = (overrides: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => loadConfig({ configDir: CONFIG_DIR, env, overrides });

/** The message of the ConfigError `fn` throws. */
function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('no ConfigError');
}

describe('worker pools: configuration', () => {
  const cpu = { name: 'cpu', taskTypes: ['render', 'hash'], processes: 1, concurrency: 2 };

  it('none by default: one default pool of WORKERS × WORKER_CONCURRENCY, ids worker-<n>', () => {
    const config = load({ workers: 3, workerConcurrency: 7 });
    expect(config.workerPools).to.deep.equal([]);
    expect(poolSpecs(config)).to.deep.equal([{ name: 'default', taskTypes: [], processes: 3, concurrency: 7 }]);
    expect(workerIdOf('default', 0)).to.equal('worker-1');
  });

  it('a pool pins its task types; its workers are <name>-worker-<n>', () => {
    const config = load({ handlers: { render: './render.js', hash: './hash.js' }, workerPools: [cpu] });
    expect(poolSpecs(config)).to.deep.equal([
      { name: 'default', taskTypes: [], processes: 2, concurrency: 1024 },
      { name: 'cpu', taskTypes: ['render', 'hash'], processes: 1, concurrency: 2 },
    ]);
    expect(workerIdOf('cpu', 1)).to.equal('cpu-worker-2');
  });

  it('env WORKER_POOLS takes the array as JSON text', () => {
    const config = load({ handlers: { render: './render.js', hash: './hash.js' } }, { WORKER_POOLS: JSON.stringify([cpu]) });
    expect(config.workerPools).to.deep.equal([cpu]);
    expect(configError(() => load({}, { WORKER_POOLS: '[{"name":' }))).to.match(
      /^invalid configuration: workerPools \(env WORKER_POOLS\): is not valid JSON text: /,
    );
  });

  it('refuses, naming the key: a duplicate or reserved name, a type in two pools, a bad name, no types, sizes out of range', () => {
    expect(configError(() => load({ workerPools: [cpu, { ...cpu, taskTypes: ['other'] }] }))).to.match(
      /workerPools\.1\.name.*"cpu" is taken/,
    );
    expect(configError(() => load({ workerPools: [{ ...cpu, name: 'default' }] }))).to.match(/workerPools\.0\.name.*reserved/);
    expect(configError(() => load({ workerPools: [cpu, { ...cpu, name: 'io', taskTypes: ['fetch', 'hash'] }] }))).to.match(
      /workerPools\.1\.taskTypes\.1.*"hash" is already pinned to pool "cpu"/,
    );
    expect(configError(() => load({ workerPools: [{ ...cpu, name: 'CPU pool' }] }))).to.match(/workerPools\.0\.name/);
    expect(configError(() => load({ workerPools: [{ ...cpu, taskTypes: [] }] }))).to.match(/workerPools\.0\.taskTypes/);
    expect(configError(() => load({ workerPools: [{ ...cpu, processes: 0 }] }))).to.match(/workerPools\.0\.processes/);
    expect(configError(() => load({ workerPools: [{ ...cpu, concurrency: 10_001 }] }))).to.match(/workerPools\.0\.concurrency/);
    expect(configError(() => load({ workerPools: [{ ...cpu, extra: 1 }] }))).to.match(/workerPools\.0/);
  });
});
