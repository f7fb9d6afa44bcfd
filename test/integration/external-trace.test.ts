import { expect } from 'chai';
import path from 'node:path';
import Redis from 'ioredis';
import pino from 'pino';
import { Scheduler, startScheduler } from '../../src/bootstrap';
import { loadConfig } from '../../src/config';
import { OtlpReceiver } from '../helpers/otlp-receiver';
import { serviceStoreOverrides } from '../helpers/service-store';
import { tempDir } from '../helpers/temp-dir';

const REDIS_URL = process.env.REDIS_URL;
const OTLP_PRODUCER = 4;

/**
 * The external-queue hand-off in a task's trace: the scheduler in this process with tracing to an
 * in-process OTLP/HTTP receiver and one external queue on a real Redis; the test plays the consumer.
 */
describe('external queue hand-off span and the context passed to the consumer (integration)', function () {
  this.timeout(30_000);
  if (!REDIS_URL) {
    it.skip('needs REDIS_URL (a Redis server; `source .ci/services.sh` starts one)', () => undefined);
    return;
  }
  const stream = `test-trace-${process.pid}-${Date.now()}:ext`;
  const receiver = new OtlpReceiver();
  const dir = tempDir();
  let scheduler: Scheduler;
  let redis: Redis;
  before(async () => {
    await receiver.start();
    const config = loadConfig({
      configDir: path.resolve(__dirname, '..', '..', '..', 'config'),
      env: {},
      overrides: {
        sqlitePath: path.join(dir.path, 's.db'),
        ...serviceStoreOverrides(dir.path),
        logLevel: 'silent',
        redisUrl: REDIS_URL,
        externalQueues: { ext: { stream } },
        tracesExporter: 'otlp',
        otlpTracesEndpoint: receiver.url,
        tracesExportDelayMs: 50,
      },
    });
    scheduler = await startScheduler(config, { logger: pino({ level: 'silent' }) });
    redis = new Redis(REDIS_URL);
  });
  after(async () => {
    await scheduler?.close();
    await redis?.del(stream);
    redis?.disconnect();
    await receiver.close();
    dir.remove();
  });

  it('the stream entry carries the publish span’s context, a child of the submission span, after the queue wait', async () => {
    const { task_id: id } = await scheduler.service.submit({ task_type: 'resize_image', queue: 'ext', payload: { n: 1 } });
    const reply = (await redis.xreadgroup('GROUP', 'scheduler', 'tester', 'COUNT', 1, 'BLOCK', 10_000, 'STREAMS', stream, '>')) as Array<
      [string, Array<[string, string[]]>]
    >;
    const fields = reply[0][1][0][1];
    const field = (k: string) => fields[fields.indexOf(k) + 1];
    expect(field('task_id')).to.equal(id);

    const spans = await receiver.waitFor(() => receiver.spansOf(id).length >= 3).then(() => receiver.spansOf(id));
    const submit = spans.find((s) => s.name === 'submit resize_image')!;
    const wait = spans.find((s) => s.name === 'wait resize_image')!;
    const publish = spans.find((s) => s.name === 'publish ext')!;
    expect(publish.kind).to.equal(OTLP_PRODUCER);
    expect(field('traceparent')).to.equal(`00-${submit.traceId}-${publish.spanId}-01`);
    for (const s of [wait, publish]) {
      expect(s.traceId).to.equal(submit.traceId);
      expect(s.parentSpanId).to.equal(submit.spanId);
      expect(s.attributes).to.include({ 'scheduler.queue': 'ext', 'scheduler.attempt': 1, 'scheduler.tenant': 'default' });
    }
    expect(publish.attributes['scheduler.outcome']).to.equal('appended');
    expect(wait.end <= publish.start).to.equal(true);

    // The consumer reports; the task ends as usual.
    const res = await scheduler.app.inject({ method: 'POST', url: `/api/v1/tasks/${id}/complete`, payload: { attempt: 1, result: 'ok' } });
    expect(res.statusCode).to.equal(200);
  });
});
