import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';

const DEFAULT_JSON = path.resolve(__dirname, '..', '..', '..', 'config', 'default.json');

function expectConfigError(fn: () => unknown): ConfigError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  expect(caught).to.be.instanceOf(ConfigError);
  return caught as ConfigError;
}

describe('loadConfig', () => {
  let dir: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scheduler-config-'));
    fs.copyFileSync(DEFAULT_JSON, path.join(dir, 'default.json'));
  });

  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const writeJson = (name: string, value: unknown): void => fs.writeFileSync(path.join(dir, name), JSON.stringify(value));

  it('loads default.json as is with an empty environment', () => {
    const cfg = loadConfig({ configDir: dir, env: {} });
    const defaults = JSON.parse(fs.readFileSync(DEFAULT_JSON, 'utf8'));
    // `handlerDirs` is derived (where each handler path resolves from), not a setting: empty here.
    expect(cfg).to.deep.equal({ ...defaults, handlerDirs: {} });
  });

  it('PORT and WORKERS from env strings become numbers', () => {
    const cfg = loadConfig({ configDir: dir, env: { PORT: '9090', WORKERS: '8' } });
    expect(cfg.port).to.equal(9090);
    expect(cfg.workers).to.equal(8);
    expect(cfg.host).to.equal('127.0.0.1'); // untouched keys keep the file value
  });

  it('other env names map to their keys (HOST, LOG_LEVEL, PARTITIONS, SCHEDULER_STORE)', () => {
    const cfg = loadConfig({
      configDir: dir,
      env: { HOST: '0.0.0.0', LOG_LEVEL: 'debug', PARTITIONS: '128', SCHEDULER_STORE: 'mongodb' },
    });
    expect(cfg.host).to.equal('0.0.0.0');
    expect(cfg.logLevel).to.equal('debug');
    expect(cfg.partitions).to.equal(128);
    expect(cfg.store).to.equal('mongodb');
  });

  it('cluster keys: leaseTtlMs 15 s and memberId null by default; LEASE_TTL_MS and MEMBER_ID override; a bad TTL names the key', () => {
    expect(loadConfig({ configDir: dir, env: {} })).to.include({ leaseTtlMs: 15_000, memberId: null });
    expect(loadConfig({ configDir: dir, env: { LEASE_TTL_MS: '6000', MEMBER_ID: 'node-7' } })).to.include({
      leaseTtlMs: 6000,
      memberId: 'node-7',
    });
    const err = expectConfigError(() => loadConfig({ configDir: dir, env: { LEASE_TTL_MS: '10' } }));
    expect(err.message).to.match(/leaseTtlMs \(env LEASE_TTL_MS\)/);
  });

  it('postgresSchema: public by default; POSTGRES_SCHEMA overrides; a name that is not a plain identifier → ConfigError naming it', () => {
    expect(loadConfig({ configDir: dir, env: {} }).postgresSchema).to.equal('public');
    expect(loadConfig({ configDir: dir, env: { POSTGRES_SCHEMA: 'cluster_a1' } }).postgresSchema).to.equal('cluster_a1');
    for (const bad of ['Cluster', '1abc', 'a-b', 'x; DROP TABLE tasks', 'a'.repeat(64)]) {
      const err = expectConfigError(() => loadConfig({ configDir: dir, env: { POSTGRES_SCHEMA: bad } }));
      expect(err.message).to.include('postgresSchema').and.include('POSTGRES_SCHEMA');
    }
  });

  it('postgresUrl: null by default; POSTGRES_URL sets it; anything but a postgres:// URL → ConfigError naming it', () => {
    expect(loadConfig({ configDir: dir, env: {} }).postgresUrl).to.equal(null);
    const url = 'postgres://scheduler@db:5432/scheduler';
    expect(loadConfig({ configDir: dir, env: { POSTGRES_URL: url } }).postgresUrl).to.equal(url);
    for (const bad of ['mysql://db/x', 'db:5432', 'postgres://']) {
      const err = expectConfigError(() => loadConfig({ configDir: dir, env: { POSTGRES_URL: bad } }));
      expect(err.message).to.include('postgresUrl').and.include('POSTGRES_URL');
    }
  });

  it('an empty env string is ignored', () => {
    const cfg = loadConfig({ configDir: dir, env: { PORT: '' } });
    expect(cfg.port).to.equal(8080);
  });

  it('an empty environment value counts as unset, for every variable: PORT= keeps the value of the files (not refused, not the default)', () => {
    writeJson('extra.json', { port: 9000 });
    expect(loadConfig({ configDir: dir, env: { SCHEDULER_CONFIG: path.join(dir, 'extra.json'), PORT: '' } }).port).to.equal(9000);
    const names = [
      ...['PORT', 'HOST', 'SCHEDULER_STORE', 'SQLITE_PATH', 'SQLITE_CREATE_DIR', 'MONGODB_URI', 'POSTGRES_URL', 'POSTGRES_SCHEMA'],
      ...['REDIS_URL', 'WORKERS', 'WORKER_CONCURRENCY', 'PARTITIONS', 'LOG_LEVEL', 'OTEL_TRACES_EXPORTER', 'OTEL_BSP_SCHEDULE_DELAY'],
      ...['ALLOW_UNAUTHENTICATED', 'LEASE_TTL_MS', 'MEMBER_ID', 'WORKER_POOLS', 'CLAIM_AHEAD_MS', 'OVERFLOW_ENABLED'],
      ...['TLS_CERT_FILE', 'TLS_KEY_FILE', 'TLS_CA_FILE', 'NODE_ENV', 'SCHEDULER_CONFIG'],
    ];
    const empty = Object.fromEntries(names.map((n) => [n, '']));
    expect(loadConfig({ configDir: dir, env: empty })).to.deep.equal(loadConfig({ configDir: dir, env: {} }));
  });

  it('<NODE_ENV>.json is merged over default.json, and env wins over both', () => {
    writeJson('staging.json', { workers: 4, defaults: { maxRetries: 7 } });
    const cfg = loadConfig({ configDir: dir, env: { NODE_ENV: 'staging' } });
    expect(cfg.workers).to.equal(4);
    expect(cfg.defaults.maxRetries).to.equal(7);
    expect(cfg.defaults.priority).to.equal('medium'); // deep merge keeps sibling keys

    const withEnv = loadConfig({ configDir: dir, env: { NODE_ENV: 'staging', WORKERS: '6' } });
    expect(withEnv.workers).to.equal(6);
  });

  it('apiKeys: a key listed twice (any case), or with both a tenant and admin → ConfigError naming the entry', () => {
    const h = 'a'.repeat(64);
    const twice = expectConfigError(() =>
      loadConfig({
        configDir: dir,
        env: {},
        overrides: {
          apiKeys: [
            { sha256: h, tenant: 't1' },
            { sha256: h.toUpperCase(), admin: true },
          ],
        },
      }),
    );
    expect(twice.message).to.include('apiKeys.1.sha256').and.include('same key as apiKeys[0]');
    const both = expectConfigError(() =>
      loadConfig({ configDir: dir, env: {}, overrides: { apiKeys: [{ sha256: h, tenant: 't1', admin: true }] } }),
    );
    expect(both.message).to.include('apiKeys.0').and.include('both "tenant" and "admin"');
    expect(
      loadConfig({
        configDir: dir,
        env: {},
        overrides: {
          apiKeys: [
            { sha256: h, admin: true },
            { sha256: 'b'.repeat(64), tenant: 't1' },
          ],
        },
      }).apiKeys,
    ).to.have.length(2);
  });

  it('tenants.<id>.weight: 0.001 to 1,000,000, as the tenants API accepts it → else ConfigError naming it', () => {
    for (const weight of [0, -1, 5e-324, 0.0009, 1e300, 1_000_001]) {
      const err = expectConfigError(() => loadConfig({ configDir: dir, env: {}, overrides: { tenants: { acme: { weight } } } }));
      expect(err.message, String(weight)).to.include('tenants.acme.weight');
    }
    expect(loadConfig({ configDir: dir, env: {}, overrides: { tenants: { acme: { weight: 1_000_000 } } } }).tenants.acme.weight).to.equal(
      1_000_000,
    );
  });

  it('rateLimits.<type> for a type no handler serves → ConfigError naming it (as the API refuses it), unless external queues are configured', () => {
    const err = expectConfigError(() =>
      loadConfig({ configDir: dir, env: {}, overrides: { rateLimits: { send_smss: { ratePerSecond: 10 } } } }),
    );
    expect(err.message).to.include('rateLimits.send_smss').and.include('no handler serves task type "send_smss"').and.include('echo');
    const handled = { handlers: { send_sms: './sms.js' }, rateLimits: { send_sms: { ratePerSecond: 10 }, echo: { ratePerSecond: 5 } } };
    expect(Object.keys(loadConfig({ configDir: dir, env: {}, overrides: handled }).rateLimits)).to.deep.equal(['send_sms', 'echo']);
    const external = { externalQueues: { jobs: { transport: 'http' } }, rateLimits: { resize_image: { ratePerSecond: 10 } } };
    expect(loadConfig({ configDir: dir, env: {}, overrides: external }).rateLimits).to.have.property('resize_image');
  });

  it('a rate limit’s burst is a whole number, as the API’s', () => {
    const err = expectConfigError(() =>
      loadConfig({ configDir: dir, env: {}, overrides: { rateLimits: { echo: { ratePerSecond: 10, burst: 1.5 } } } }),
    );
    expect(err.message).to.include('rateLimits.echo.burst');
    expect(
      loadConfig({ configDir: dir, env: {}, overrides: { rateLimits: { echo: { ratePerSecond: 10, burst: 2 } } } }).rateLimits.echo.burst,
    ).to.equal(2);
  });

  it('overrides win over env', () => {
    const cfg = loadConfig({ configDir: dir, env: { WORKERS: '6' }, overrides: { workers: 3 } });
    expect(cfg.workers).to.equal(3);
  });

  it('WORKERS=0 → ConfigError naming `workers` and `WORKERS`', () => {
    const err = expectConfigError(() => loadConfig({ configDir: dir, env: { WORKERS: '0' } }));
    expect(err.message).to.include('workers');
    expect(err.message).to.include('WORKERS');
    expect(err.name).to.equal('ConfigError');
    expect(err.message).to.not.include('\n');
  });

  it('claimAheadMs: 0 (off) by default, CLAIM_AHEAD_MS sets it; negative, fractional, over a minute or not a number → ConfigError naming it', () => {
    expect(loadConfig({ configDir: dir, env: {} }).claimAheadMs).to.equal(0);
    expect(loadConfig({ configDir: dir, env: { CLAIM_AHEAD_MS: '5000' } }).claimAheadMs).to.equal(5000);
    for (const bad of [-1, 1.5, 60_001, 'soon']) {
      const err = expectConfigError(() => loadConfig({ configDir: dir, env: {}, overrides: { claimAheadMs: bad } }));
      expect(err.message, String(bad)).to.include('claimAheadMs');
    }
    expect(expectConfigError(() => loadConfig({ configDir: dir, env: { CLAIM_AHEAD_MS: 'soon' } })).message).to.include('claimAheadMs');
  });

  it('dueMarkDelayMs: 1 s by default, 0 allowed; negative, fractional or over a minute → ConfigError naming it', () => {
    expect(loadConfig({ configDir: dir, env: {} }).dueMarkDelayMs).to.equal(1000);
    expect(loadConfig({ configDir: dir, env: {}, overrides: { dueMarkDelayMs: 0 } }).dueMarkDelayMs).to.equal(0);
    for (const bad of [-1, 1.5, 60_001, 'soon']) {
      const err = expectConfigError(() => loadConfig({ configDir: dir, env: {}, overrides: { dueMarkDelayMs: bad } }));
      expect(err.message, String(bad)).to.include('dueMarkDelayMs');
    }
  });

  it('a REDIS_URL that is not a redis:// URL → ConfigError naming `redisUrl` and `REDIS_URL`', () => {
    const err = expectConfigError(() => loadConfig({ configDir: dir, env: { REDIS_URL: 'localhost:6379' } }));
    expect(err.message).to.include('redisUrl');
    expect(err.message).to.include('REDIS_URL');
    expect(loadConfig({ configDir: dir, env: { REDIS_URL: 'rediss://u:p@h:6380/2' } }).redisUrl).to.equal('rediss://u:p@h:6380/2');
  });

  it('a REDIS_URL, POSTGRES_URL or MONGODB_URI whose port is not 1 to 65535, or that is no URL → one-line ConfigError naming the key, not the value', () => {
    const bad: Array<[string, string, string]> = [
      ['REDIS_URL', 'redisUrl', 'redis://localhost:99999'],
      ['REDIS_URL', 'redisUrl', 'redis://:@:99999'],
      ['REDIS_URL', 'redisUrl', 'rediss://u:secret@h:65536/2'],
      ['REDIS_URL', 'redisUrl', 'redis://h:0'],
      ['REDIS_URL', 'redisUrl', 'redis://h:63x79'],
      ['REDIS_URL', 'redisUrl', 'redis://h^x:6379'],
      ['POSTGRES_URL', 'postgresUrl', 'postgres://scheduler:secret@db:99999/scheduler'],
      ['POSTGRES_URL', 'postgresUrl', 'postgres://db:5432,db2:5432/scheduler'],
      ['MONGODB_URI', 'mongodbUri', 'mongodb://db1:27017,db2:99999/sched?replicaSet=rs'],
      ['MONGODB_URI', 'mongodbUri', 'mongodb://u:secret@db:0/sched'],
    ];
    for (const [name, key, url] of bad) {
      const err = expectConfigError(() => loadConfig({ configDir: dir, env: { [name]: url } }));
      expect(err.message, url).to.match(new RegExp(`^invalid configuration: ${key} \\(env ${name}\\): `));
      expect(err.message, url).to.not.include('\n').and.not.include('secret');
    }
    const good: Array<[string, string, string]> = [
      ['REDIS_URL', 'redisUrl', 'redis://h:65535'],
      ['REDIS_URL', 'redisUrl', 'rediss://u:p@[::1]:6380/2'],
      ['REDIS_URL', 'redisUrl', 'redis://redis'],
      ['POSTGRES_URL', 'postgresUrl', 'postgres://user@/db'],
      ['POSTGRES_URL', 'postgresUrl', 'postgresql://%2Fvar%2Frun%2Fpostgresql/scheduler'],
      ['MONGODB_URI', 'mongodbUri', 'mongodb://user:secret@db1:27017,db2:27017/sched?replicaSet=rs'],
      ['MONGODB_URI', 'mongodbUri', 'mongodb+srv://u:p@cluster.example.net/prod_db'],
    ];
    for (const [name, key, url] of good) expect(loadConfig({ configDir: dir, env: { [name]: url } }), url).to.have.property(key, url);
  });

  it('a "__proto__" key in a config file (at the top, in a map, in a list) or in overrides → ConfigError naming its path, never dropped', () => {
    const file = path.join(dir, 'extra.json');
    for (const [text, at] of [
      ['{"__proto__": {"workers": 0, "logLevel": "nonsense"}}', '__proto__'],
      ['{"handlers": {"__proto__": "./does-not-exist.js"}}', 'handlers.__proto__'],
      ['{"defaults": {"__proto__": {"maxRetries": 2}}}', 'defaults.__proto__'],
      [
        '{"workerPools": [{"name": "cpu", "taskTypes": ["echo"], "processes": 1, "concurrency": 1, "__proto__": {}}]}',
        'workerPools.0.__proto__',
      ],
    ]) {
      fs.writeFileSync(file, text);
      const err = expectConfigError(() => loadConfig({ configDir: dir, env: { SCHEDULER_CONFIG: file } }));
      expect(err.message, text).to.equal(
        `invalid configuration: ${at} (in ${file}): unknown key ("__proto__" cannot be a key of the configuration, not even a task type or queue name)`,
      );
    }
    fs.writeFileSync(path.join(dir, 'ci.json'), '{"tenants": {"__proto__": {"weight": 2}}}');
    expect(expectConfigError(() => loadConfig({ configDir: dir, env: { NODE_ENV: 'ci' } })).message).to.include('tenants.__proto__ (in ');
    const overrides = JSON.parse('{"rateLimits": {"__proto__": {"ratePerSecond": 1}}}') as Record<string, unknown>;
    expect(expectConfigError(() => loadConfig({ configDir: dir, env: {}, overrides })).message).to.include(
      'rateLimits.__proto__ (in overrides)',
    );
  });

  it('workerPools pinning a task type no handler serves → ConfigError naming it (as rateLimits.<type>), unless external queues are configured', () => {
    const pool = (taskTypes: string[]) => [{ name: 'cpu', taskTypes, processes: 1, concurrency: 1 }];
    const fromEnv = expectConfigError(() => loadConfig({ configDir: dir, env: { WORKER_POOLS: JSON.stringify(pool(['echo', 'ecoh'])) } }));
    expect(fromEnv.message).to.equal(
      'invalid configuration: workerPools.0.taskTypes.1 (env WORKER_POOLS): no handler serves task type "ecoh" (registered: echo, fail, http, noop, sleep; add it to handlers, or fix the name)',
    );
    writeJson('extra.json', { workerPools: pool(['render']) });
    const fromFile = expectConfigError(() => loadConfig({ configDir: dir, env: { SCHEDULER_CONFIG: path.join(dir, 'extra.json') } }));
    expect(fromFile.message).to.include('workerPools.0.taskTypes.0').and.include('no handler serves task type "render"');
    const handled = { handlers: { render: './render.js' }, workerPools: pool(['render', 'echo']) };
    expect(loadConfig({ configDir: dir, env: {}, overrides: handled }).workerPools[0].taskTypes).to.deep.equal(['render', 'echo']);
    const external = { externalQueues: { jobs: { transport: 'http' } }, workerPools: pool(['resize_image']) };
    expect(loadConfig({ configDir: dir, env: {}, overrides: external }).workerPools[0].taskTypes).to.deep.equal(['resize_image']);
  });

  it('a non-numeric PORT → ConfigError naming `port` and `PORT`', () => {
    const err = expectConfigError(() => loadConfig({ configDir: dir, env: { PORT: 'eighty' } }));
    expect(err.message).to.include('port');
    expect(err.message).to.include('PORT');
    // What Number() would read but no one means: hex, an exponent, spaces (0x4739 listened on 18233).
    for (const PORT of ['0x4739', '1e3', ' 8080', '8080.0', 'Infinity']) {
      const odd = expectConfigError(() => loadConfig({ configDir: dir, env: { PORT } }));
      expect(odd.message, PORT).to.include('port (env PORT): must be a whole number written in decimal digits');
    }
    expect(loadConfig({ configDir: dir, env: { PORT: '8081', WORKERS: '3' } })).to.include({ port: 8081, workers: 3 });
  });

  it('an unknown top-level key in a JSON file → ConfigError', () => {
    const defaults = JSON.parse(fs.readFileSync(DEFAULT_JSON, 'utf8'));
    writeJson('default.json', { ...defaults, wrokers: 4 });
    const err = expectConfigError(() => loadConfig({ configDir: dir, env: {} }));
    expect(err.message).to.include('wrokers');
  });

  it('SCHEDULER_CONFIG names a JSON file merged after the NODE_ENV file and before env vars', () => {
    writeJson('ci.json', { workers: 3, handlers: { a: './a.js' } });
    writeJson('extra.json', { workers: 5, handlers: { b: '/abs/b.js' } });
    const cfg = loadConfig({ configDir: dir, env: { NODE_ENV: 'ci', SCHEDULER_CONFIG: path.join(dir, 'extra.json'), PORT: '9000' } });
    expect(cfg.workers).to.equal(5);
    expect(cfg.handlers).to.deep.equal({ a: './a.js', b: '/abs/b.js' });
    expect(cfg.port).to.equal(9000);
  });

  it('a SCHEDULER_CONFIG file that does not exist → ConfigError naming it', () => {
    const err = expectConfigError(() => loadConfig({ configDir: dir, env: { SCHEDULER_CONFIG: path.join(dir, 'nope.json') } }));
    expect(err.message).to.include('SCHEDULER_CONFIG');
  });

  it('NODE_ENV that is a path, not a name → ConfigError', () => {
    const err = expectConfigError(() => loadConfig({ configDir: dir, env: { NODE_ENV: '../../tmp/x' } }));
    expect(err.message).to.include('NODE_ENV');
  });

  it('an unknown key in the NODE_ENV file → ConfigError', () => {
    writeJson('ci.json', { notAKey: true });
    expectConfigError(() => loadConfig({ configDir: dir, env: { NODE_ENV: 'ci' } }));
  });

  it('an unknown nested key under defaults → ConfigError naming defaults', () => {
    writeJson('ci.json', { defaults: { maxRetry: 2 } });
    const err = expectConfigError(() => loadConfig({ configDir: dir, env: { NODE_ENV: 'ci' } }));
    expect(err.message).to.include('defaults');
  });

  it('a file that is not valid JSON → ConfigError naming the file', () => {
    fs.writeFileSync(path.join(dir, 'default.json'), '{ "port": 80, ');
    const err = expectConfigError(() => loadConfig({ configDir: dir, env: {} }));
    expect(err.message).to.include('default.json');
  });

  it('a file whose top level is not an object (null, a number, an array, a string) → ConfigError naming the file', () => {
    for (const [text, got] of [
      ['null', 'null'],
      ['42', 'a number'],
      ['[]', 'an array'],
      ['"str"', 'a string'],
    ]) {
      fs.writeFileSync(path.join(dir, 'ci.json'), text);
      const err = expectConfigError(() => loadConfig({ configDir: dir, env: { NODE_ENV: 'ci' } }));
      expect(err.message).to.equal(
        `config file ${path.join(dir, 'ci.json')} must hold a JSON object of settings ({"key": value, …}), not ${got}`,
      );
    }
  });

  it('a duration that sets a timer is at most 2^31 − 1 ms (Node would fire a longer one at once); task defaults as the API bounds them; a MongoDB URI is one', () => {
    for (const [overrides, key] of [
      [{ shutdownGraceMs: 2_592_000_000 }, 'shutdownGraceMs'],
      [{ auditIntervalMs: 2_147_483_648 }, 'auditIntervalMs'],
      [{ maintenanceIntervalMs: 2_592_000_000 }, 'maintenanceIntervalMs'],
      [{ cronHorizonMs: 1e12 }, 'cronHorizonMs'],
      [{ leaseMs: 2_592_000_000 }, 'leaseMs'],
      [{ defaults: { timeoutSeconds: 2_592_000 } }, 'defaults.timeoutSeconds'],
      [{ defaults: { maxRetryDelaySeconds: 604_801 } }, 'defaults.maxRetryDelaySeconds'],
      [{ defaults: { retryDelaySeconds: 86_401 } }, 'defaults.retryDelaySeconds'],
      [{ cronMisfireGraceMs: 0 }, 'cronMisfireGraceMs'],
      [{ mongodbUri: 'xx' }, 'mongodbUri'],
      [{ mongodbUri: 'mongodb://' }, 'mongodbUri'],
    ] as const) {
      const err = expectConfigError(() => loadConfig({ configDir: dir, env: {}, overrides }));
      expect(err.message).to.match(new RegExp(`^invalid configuration: ${key.replace('.', '\\.')}( \\(env [A-Z_]+\\))?: `));
    }
    expect(loadConfig({ configDir: dir, env: {}, overrides: { shutdownGraceMs: 2_147_483_647 } }).shutdownGraceMs).to.equal(2_147_483_647);
    // Retention is compared with the clock, never a timer: 30 days is fine.
    expect(loadConfig({ configDir: dir, env: {}, overrides: { resultRetentionMs: 2_592_000_000 } }).resultRetentionMs).to.equal(
      2_592_000_000,
    );
  });

  it('the result is deep-frozen', () => {
    const cfg = loadConfig({ configDir: dir, env: {} });
    expect(Object.isFrozen(cfg)).to.equal(true);
    expect(Object.isFrozen(cfg.defaults)).to.equal(true);
    expect(Object.isFrozen(cfg.handlers)).to.equal(true);
    expect(() => {
      (cfg as { port: number }).port = 1;
    }).to.throw(TypeError);
    expect(() => {
      (cfg.defaults as { maxRetries: number }).maxRetries = 99;
    }).to.throw(TypeError);
    expect(cfg.port).to.equal(8080);
  });

  it('does not read process.env when env is given', () => {
    const saved = process.env.WORKERS;
    process.env.WORKERS = '0';
    try {
      expect(loadConfig({ configDir: dir, env: {} }).workers).to.equal(2);
    } finally {
      if (saved === undefined) delete process.env.WORKERS;
      else process.env.WORKERS = saved;
    }
  });
});
