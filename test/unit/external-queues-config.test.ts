import { expect } from 'chai';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config';
import { externalQueueSpecs, isExternalWorker } from '../../src/domain/external-queues';
import { createStreamRedis } from '../../src/cluster/redis/redis-connection';
import { streamFields } from '../../src/actors/dispatcher/stream-dispatch';

const CONFIG_DIR = path.resolve(__dirname, '..', '..', '..', 'config');
const load = (overrides: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => loadConfig({ configDir: CONFIG_DIR, env, overrides });

describe('external queues: configuration', () => {
  it('none by default; no Redis client is made', () => {
    const config = load({});
    expect(config.externalQueues).to.deep.equal({});
    expect(externalQueueSpecs(config).size).to.equal(0);
    expect(createStreamRedis(config)).to.equal(null);
  });

  it('applies the defaults: stream scheduler:queue:<name>, group scheduler, the top-level leaseMs, maxInFlight 1000', () => {
    const config = load({
      redisUrl: 'redis://127.0.0.1:1',
      leaseMs: 20_000,
      externalQueues: { emails: {}, sms: { stream: 's', group: 'g', leaseMs: 500, maxInFlight: 7 } },
    });
    const specs = externalQueueSpecs(config);
    expect(specs.get('emails')).to.deep.equal({
      name: 'emails',
      transport: 'stream',
      stream: 'scheduler:queue:emails',
      group: 'scheduler',
      leaseMs: 20_000,
      maxInFlight: 1000,
      workerId: 'external:emails',
    });
    expect(specs.get('sms')).to.deep.equal({
      name: 'sms',
      transport: 'stream',
      stream: 's',
      group: 'g',
      leaseMs: 500,
      maxInFlight: 7,
      workerId: 'external:sms',
    });
    expect(isExternalWorker('external:sms')).to.equal(true);
    expect(isExternalWorker('worker-1')).to.equal(false);
    expect(isExternalWorker(null)).to.equal(false);
  });

  it('a pull queue (transport "http") needs no Redis: no stream client is made; its attempts count as external', () => {
    const config = load({ externalQueues: { jobs: { transport: 'http', leaseMs: 2000, maxInFlight: 5 } } });
    expect(config.redisUrl).to.equal(null);
    expect(createStreamRedis(config)).to.equal(null);
    expect(externalQueueSpecs(config).get('jobs')).to.deep.include({ name: 'jobs', transport: 'http', leaseMs: 2000, maxInFlight: 5 });
    expect(isExternalWorker('http:worker-7')).to.equal(true);
    // A stream queue beside it still needs redisUrl.
    expect(() => load({ externalQueues: { jobs: { transport: 'http' }, mail: {} } })).to.throw(
      ConfigError,
      /externalQueues \(mail\) needs redisUrl/,
    );
  });

  it('refuses a pull queue with stream settings, and an unknown transport', () => {
    expect(() => load({ externalQueues: { jobs: { transport: 'http', stream: 's' } } })).to.throw(
      ConfigError,
      /externalQueues\.jobs: stream and group are settings of a Redis stream queue/,
    );
    expect(() => load({ externalQueues: { jobs: { transport: 'http', group: 'g' } } })).to.throw(ConfigError, /externalQueues\.jobs/);
    expect(() => load({ externalQueues: { jobs: { transport: 'grpc' } } })).to.throw(ConfigError, /externalQueues\.jobs\.transport/);
  });

  it('refuses external queues without redisUrl, naming the key and REDIS_URL', () => {
    let caught: unknown;
    try {
      load({ externalQueues: { emails: {} } });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(ConfigError);
    expect((caught as Error).message).to.match(/^invalid configuration: externalQueues \(emails\) needs redisUrl \(env REDIS_URL\)/);
    // REDIS_URL from the environment is enough.
    expect(load({ externalQueues: { emails: {} } }, { REDIS_URL: 'redis://127.0.0.1:1' }).redisUrl).to.equal('redis://127.0.0.1:1');
  });

  it('refuses bad queue settings with the key path', () => {
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ emails: { leaseMs: 10 } }, /externalQueues\.emails\.leaseMs/],
      [{ emails: { maxInFlight: 0 } }, /externalQueues\.emails\.maxInFlight/],
      [{ emails: { stream: '' } }, /externalQueues\.emails\.stream/],
      [{ emails: { consumers: 3 } }, /externalQueues\.emails/],
      [{ emails: 'scheduler:queue:emails' }, /externalQueues\.emails/],
    ];
    for (const [externalQueues, message] of bad) {
      expect(() => load({ redisUrl: 'redis://127.0.0.1:1', externalQueues }), JSON.stringify(externalQueues)).to.throw(
        ConfigError,
        message,
      );
    }
  });

  it('stream entry fields: strings, JSON payload, empty strings for absent key and traceparent, ISO deadline', () => {
    const fields = streamFields({
      taskId: 't1',
      attempt: 3,
      taskType: 'send',
      payload: { a: [1] },
      idempotencyKey: null,
      traceparent: null,
      deadline: Date.UTC(2026, 0, 1),
    });
    expect(fields).to.deep.equal([
      'task_id',
      't1',
      'attempt',
      '3',
      'task_type',
      'send',
      'payload',
      '{"a":[1]}',
      'idempotency_key',
      '',
      'traceparent',
      '',
      'deadline',
      '2026-01-01T00:00:00.000Z',
    ]);
  });
});
