import { expect } from 'chai';
import diagnostics from 'node:diagnostics_channel';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BadRequestError,
  ClientOptionError,
  ConflictError,
  ConnectionError,
  createClient,
  NotFoundError,
  RateLimitedError,
  RequestBodyError,
  SchedulerApiError,
  UnavailableError,
  WaitTimeoutError,
} from '../../src/sdk/client';
import type { ClientOptions, WaitOptions } from '../../src/sdk/client';
import { backoffDelayMs, retryAfterMs } from '../../src/sdk/retry';
import { createWorker } from '../../src/sdk/worker';
import type { WorkerOptions } from '../../src/sdk/worker';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
interface Seen {
  method: string;
  url: string;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** A fake API: answers each request with the next handler (the last one repeats) and records what it was sent. */
async function fakeServer(handlers: Handler[]): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', body, headers: req.headers });
      handlers[Math.min(seen.length - 1, handlers.length - 1)](req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const apiError = (status: number, code: string, details: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  json(status, { error: { code, message: `${code} happened`, details } }, headers);

/** A manual clock and a sleep that advances it at once (no real waiting), recording each delay. */
function fakeTime(start = Date.UTC(2026, 0, 1)) {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    options: {
      now: () => now,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        now += ms;
      },
      random: () => 0.5,
    } satisfies Partial<ClientOptions>,
    advance: (ms: number) => (now += ms),
  };
}

describe('SDK client over a fake HTTP server', () => {
  let server: Awaited<ReturnType<typeof fakeServer>> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const ack = { task_id: 't1', status: 'PENDING', scheduled_at: null, created_at: '2026-01-01T00:00:00.000Z' };

  it('retries a POST answered 429 after its Retry-After seconds, then answers the acknowledgement', async () => {
    server = await fakeServer([apiError(429, 'RATE_LIMITED', {}, { 'retry-after': '2' }), json(202, ack)]);
    const time = fakeTime();
    const client = createClient({ url: server.url, apiKey: 'k', ...time.options });
    expect(await client.tasks.submit({ task_type: 'echo', payload: { a: 1 } })).to.deep.equal(ack);
    expect(time.sleeps).to.deep.equal([2000]);
    expect(server.seen.map((s) => `${s.method} ${s.url}`)).to.deep.equal(['POST /api/v1/tasks', 'POST /api/v1/tasks']);
    expect(JSON.parse(server.seen[1].body)).to.deep.equal({ task_type: 'echo', payload: { a: 1 } });
    expect(server.seen[0].headers.authorization).to.equal('Bearer k');
  });

  it('honours a Retry-After HTTP date, capped by maxDelayMs, and backs off exponentially without one', async () => {
    const time = fakeTime(Date.UTC(2026, 0, 1, 0, 0, 0));
    const in5s = new Date(Date.UTC(2026, 0, 1, 0, 0, 5)).toUTCString();
    server = await fakeServer([
      apiError(503, 'OVERLOADED', {}, { 'retry-after': in5s }),
      apiError(503, 'OVERLOADED', {}, { 'retry-after': '120' }),
      apiError(503, 'OVERLOADED'),
      json(200, { tasks: [], next_cursor: null }),
    ]);
    const client = createClient({ url: server.url, retry: { maxAttempts: 4, maxDelayMs: 10_000 }, ...time.options });
    expect(await client.tasks.list()).to.deep.equal({ tasks: [], next_cursor: null });
    // 5 s from the date; 120 s capped to 10 s; no header on the 3rd try: 250·2² = 1000 ms, equal jitter at 0.5 → 750.
    expect(time.sleeps).to.deep.equal([5000, 10_000, 750]);
    expect(retryAfterMs('1.5', 0)).to.equal(1500);
    expect(retryAfterMs('soon', 0)).to.equal(undefined);
    // Not an HTTP date, though Date.parse reads it (the year −5): no wait asked, so the backoff applies.
    expect(retryAfterMs('-5', 0)).to.equal(undefined);
    expect(retryAfterMs('Thu, 01 Jan 1970 00:00:02 GMT', 0)).to.equal(2000);
    expect(backoffDelayMs(1, {}, () => 0)).to.equal(125);
    expect(backoffDelayMs(30, { maxDelayMs: 4000 }, () => 0.999)).to.be.within(3990, 4000);
  });

  it('gives up after maxAttempts with a typed error carrying the Retry-After', async () => {
    server = await fakeServer([apiError(429, 'RATE_LIMITED', { retry_after_seconds: 1 }, { 'retry-after': '1' })]);
    const time = fakeTime();
    const client = createClient({ url: server.url, retry: { maxAttempts: 2 }, ...time.options });
    const err = await client.tasks.submit({ task_type: 'echo' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(RateLimitedError).and.instanceOf(SchedulerApiError);
    expect(err).to.include({ status: 429, code: 'RATE_LIMITED', retryAfterMs: 1000 });
    expect(server.seen).to.have.length(2);
  });

  it('turns the API error shape into typed errors with code, message, details and field', async () => {
    server = await fakeServer([
      apiError(400, 'VALIDATION_FAILED', { field: 'scheduled_at' }),
      apiError(404, 'TASK_NOT_FOUND', { task_id: 'x' }),
      apiError(409, 'TASK_STATE_CONFLICT'),
      apiError(503, 'STORE_UNAVAILABLE'),
      (_req, res) => {
        res.writeHead(502);
        res.end('bad gateway');
      },
    ]);
    const client = createClient({ url: server.url, retry: { maxAttempts: 1 } });
    const bad = await client.tasks.submit({ task_type: 'echo', scheduled_at: 'x' }).catch((e: unknown) => e);
    expect(bad).to.be.instanceOf(BadRequestError).and.include({ status: 400, code: 'VALIDATION_FAILED', field: 'scheduled_at' });
    expect((bad as Error).message).to.equal('VALIDATION_FAILED happened');
    const missing = await client.tasks.get('x').catch((e: unknown) => e);
    expect(missing)
      .to.be.instanceOf(NotFoundError)
      .and.deep.include({ code: 'TASK_NOT_FOUND', details: { task_id: 'x' }, field: undefined });
    expect(await client.tasks.cancel('x').catch((e: unknown) => e)).to.be.instanceOf(ConflictError);
    expect(await client.crons.get('c').catch((e: unknown) => e)).to.be.instanceOf(UnavailableError);
    const other = await client.health.live().catch((e: unknown) => e);
    expect(other).to.be.instanceOf(SchedulerApiError).and.include({ status: 502, code: 'HTTP_502', message: 'bad gateway' });
  });

  it('retries a refused connection, and a GET or a keyed submission whose connection broke mid-request, but not a plain POST', async () => {
    const time = fakeTime();
    const refused = createClient({ url: 'http://127.0.0.1:9', ...time.options });
    const err = await refused.tasks.submit({ task_type: 'echo' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConnectionError).and.include({ code: 'ECONNREFUSED' });
    expect(time.sleeps).to.have.length(2);

    const hangUp: Handler = (req) => req.socket.destroy();
    server = await fakeServer([hangUp, json(202, ack)]);
    const client = createClient({ url: server.url, ...time.options });
    expect(await client.tasks.submit({ task_type: 'echo' }).catch((e: unknown) => e)).to.be.instanceOf(ConnectionError);
    expect(server.seen).to.have.length(1);
    await server.close();

    server = await fakeServer([hangUp, json(202, ack)]);
    const keyed = createClient({ url: server.url, ...time.options });
    expect(await keyed.tasks.submit({ task_type: 'echo', idempotency_key: 'k1' })).to.deep.equal(ack);
    expect(server.seen).to.have.length(2);
    await server.close();

    server = await fakeServer([hangUp, json(200, { tenants: [] })]);
    expect(await createClient({ url: server.url, ...time.options }).tenants.list()).to.deep.equal([]);
  });

  it('a 2xx answer that is not JSON (another server: a proxy, a login page) is a SchedulerApiError NOT_JSON, not a result; /metrics is Prometheus text or NOT_METRICS', async () => {
    const text: Handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>sign in</html>');
    };
    const metricsText =
      (contentType: string): Handler =>
      (_req, res) => {
        res.writeHead(200, { 'content-type': contentType });
        res.end('# TYPE up gauge\nup 1\n');
      };
    server = await fakeServer([
      text,
      text,
      json(204, null),
      text,
      metricsText('text/plain; version=0.0.4; charset=utf-8'),
      metricsText('Application/OpenMetrics-Text; version=1.0.0'),
    ]);
    const client = createClient({ url: server.url, retry: { maxAttempts: 1 } });
    for (const call of [() => client.tasks.submit({ task_type: 'echo' }), () => client.tasks.get('t1')]) {
      const err = await call().catch((e: unknown) => e);
      expect(err)
        .to.be.instanceOf(SchedulerApiError)
        .and.deep.include({
          status: 200,
          code: 'NOT_JSON',
          details: { content_type: 'text/html', body: '<html>sign in</html>' },
        });
      expect((err as Error).message)
        .to.include('is not JSON')
        .and.include(server.url);
    }
    expect((await client.transport.request('GET', '/x')).body).to.equal(null); // 204: no content, not an error
    // Every answer of the scheduler has a body: an empty 200 is another server's (or a cut) answer.
    const empty = await fakeServer([(_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end()]);
    try {
      const emptyErr = await createClient({ url: empty.url, retry: { maxAttempts: 1 } })
        .tasks.get('t1')
        .catch((e: unknown) => e);
      expect(emptyErr).to.be.instanceOf(SchedulerApiError).and.deep.include({ status: 200, code: 'NOT_JSON' });
    } finally {
      await empty.close();
    }
    const err = await client.health.metrics().catch((e: unknown) => e);
    expect(err)
      .to.be.instanceOf(SchedulerApiError)
      .and.deep.include({ status: 200, code: 'NOT_METRICS', details: { content_type: 'text/html', body: '<html>sign in</html>' } });
    expect((err as Error).message)
      .to.include('is not Prometheus text')
      .and.include(`${server.url}/metrics`);
    expect(await client.health.metrics()).to.equal('# TYPE up gauge\nup 1\n');
    expect(await client.health.metrics(), 'OpenMetrics, any case').to.equal('# TYPE up gauge\nup 1\n');
  });

  it('a 2xx answer that is JSON but not an object (null, a number, a string) is UNEXPECTED_ANSWER, not a result', async () => {
    const answers = ['null', '42', '"ok"', 'true'];
    server = await fakeServer([
      ...answers.map(
        (text): Handler =>
          (_req, res) =>
            res.writeHead(200, { 'content-type': 'application/json' }).end(text),
      ),
      json(200, []),
    ]);
    const client = createClient({ url: server.url, retry: { maxAttempts: 1 } });
    for (const text of answers) {
      const err = await client.tasks.get('t1').catch((e: unknown) => e);
      expect(err, text)
        .to.be.instanceOf(SchedulerApiError)
        .and.deep.include({ status: 200, code: 'UNEXPECTED_ANSWER', details: { content_type: 'application/json', body: text } });
      expect((err as Error).message).to.include(`${server.url}/api/v1/tasks/t1 is ${text}, not an object`);
    }
    expect((await client.transport.request('GET', '/x')).body, 'an array is an answer').to.deep.equal([]);
  });

  it('an abort stops a request until its answer begins to arrive; an answer on its way is read whole (a lease that claimed tasks)', async () => {
    const controller = new AbortController();
    let sendRest: () => void = () => undefined;
    server = await fakeServer([
      // Headers and half the body, then the rest only after the client's signal was aborted.
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '19' });
        res.write('{"tasks":[{"a');
        sendRest = () => res.end('":1}]}');
      },
      // This one never answers: the abort ends it.
      () => undefined,
    ]);
    const client = createClient({ url: server.url, retry: { maxAttempts: 1 } });
    // The client has the answer's headers (Node's own event for it): abort now, then the rest comes.
    const onHeaders = () => {
      diagnostics.unsubscribe('http.client.response.finish', onHeaders);
      controller.abort();
      sendRest();
    };
    diagnostics.subscribe('http.client.response.finish', onHeaders);
    const first = client.transport.request('POST', '/lease', { body: {}, signal: controller.signal });
    expect((await first).body).to.deep.equal({ tasks: [{ a: 1 }] });
    expect(controller.signal.aborted).to.equal(true);
    const waiting = new AbortController();
    const second = client.transport.request('POST', '/lease', { body: {}, signal: waiting.signal }).catch((e: unknown) => e);
    while (server.seen.length < 2) await new Promise((r) => setImmediate(r));
    waiting.abort();
    expect(await second).to.be.instanceOf(ConnectionError);
    const before = new AbortController();
    before.abort();
    expect(await client.transport.request('GET', '/x', { signal: before.signal }).catch((e: unknown) => e)).to.be.instanceOf(
      ConnectionError,
    );
  });

  it('several URLs (cluster members): after a refused connection or a 503 the request and those after it go to the next', async () => {
    const time = fakeTime();
    server = await fakeServer([json(200, { tenants: [] })]);
    const client = createClient({ url: ['http://127.0.0.1:9', `${server.url}/`], ...time.options });
    expect(client.transport.base).to.equal('http://127.0.0.1:9');
    expect(await client.tenants.list()).to.deep.equal([]); // refused, then the second member
    expect(time.sleeps).to.have.length(1);
    expect(client.transport.base).to.equal(server.url);
    expect(await client.tenants.list()).to.deep.equal([]); // straight to the second now
    expect(time.sleeps).to.have.length(1);
    expect(server.seen).to.have.length(2);
    // A plain POST whose connection was refused is not retried, but the next call goes elsewhere.
    const flip = createClient({ url: ['http://127.0.0.1:9', server.url], ...time.options, retry: { maxAttempts: 1 } });
    expect(await flip.tasks.submit({ task_type: 'echo' }).catch((e: unknown) => e))
      .to.be.instanceOf(ConnectionError)
      .and.include({ code: 'ECONNREFUSED' });
    expect(flip.transport.base).to.equal(server.url);
    await server.close();

    const other = await fakeServer([json(200, { tenants: [] })]);
    server = await fakeServer([apiError(503, 'STORE_UNAVAILABLE', {}, { 'retry-after': '1' })]);
    const pair = createClient({ url: [server.url, other.url], ...time.options });
    expect(await pair.tenants.list()).to.deep.equal([]);
    expect([server.seen.length, other.seen.length]).to.deep.equal([1, 1]);
    await other.close();
  });

  it('several URLs: health.ready() asks the next member at once when one cannot be reached (each once, no backoff)', async () => {
    const time = fakeTime();
    server = await fakeServer([json(503, { status: 'not_ready' })]);
    const client = createClient({ url: ['http://127.0.0.1:9', server.url], ...time.options });
    expect(await client.health.ready()).to.deep.include({ status: 'not_ready' }); // the second member's own answer
    expect(time.sleeps).to.have.length(0);
    expect(server.seen).to.have.length(1);
    // Every member away: one try each, then the connection error.
    const none = createClient({ url: ['http://127.0.0.1:9', 'http://127.0.0.1:7'], ...time.options });
    expect(await none.health.ready().catch((e: unknown) => e)).to.be.instanceOf(ConnectionError);
    expect(time.sleeps).to.have.length(0);
  });

  it('a url list is refused when it names one member twice, or a url has white space at its ends, a query, a fragment, credentials, or is not a string', () => {
    for (const [url, reason] of [
      [['http://a:8080', 'http://a:8080/'], 'lists one member twice: "http://a:8080" and "http://a:8080/"'],
      [['http://a:80', 'HTTP://A'], 'lists one member twice'],
      [['http://a/s', 'http://b/s', 'http://a/s//'], 'lists one member twice'],
      [' http://a:8080', 'starts or ends with white space'],
      [['http://a:8080 '], 'starts or ends with white space'],
      ['http://a:8080/?x=1', 'no query or fragment'],
      ['http://a:8080#top', 'no query or fragment'],
      ['http://admin:secret@a:8080', 'carries credentials'],
      [['http://b:8080', 'http://key@a:8080'], 'carries credentials'],
      [new URL('http://a:8080'), 'a URL object: pass its .href'],
      [[8080], 'got number'],
    ] as const) {
      for (const make of [
        () => createClient({ url } as unknown as ClientOptions),
        () => createWorker({ url, queue: 'q', handlers: {} } as unknown as WorkerOptions),
      ]) {
        expect(make, JSON.stringify(url)).to.throw(ClientOptionError).with.property('reason').that.include(reason);
      }
    }
    // A path is a prefix (a proxy serving the API under /scheduler); the same host under two paths is two bases.
    expect(createClient({ url: ['http://a/s', 'http://a/t'] }).transport.base).to.equal('http://a/s');
  });

  it('a fetchTimeoutMs that is not a number of ms a timer takes is refused when the client is made, naming it', () => {
    for (const bad of ['1000', -1, 0, Number.NaN, 2 ** 31]) {
      const err = (() => {
        try {
          createClient({ url: 'http://127.0.0.1:1', fetchTimeoutMs: bad as never });
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err, String(bad)).to.be.instanceOf(ClientOptionError).and.include({ option: 'fetchTimeoutMs' });
    }
    expect(createClient({ url: 'http://127.0.0.1:1', fetchTimeoutMs: 1 }).transport.fetchTimeoutMs).to.equal(1);
  });

  it('an empty list of URLs, or one that is not http(s), is refused when the client is made', () => {
    for (const url of [[], ['http://127.0.0.1:8080', 'ftp://x']]) {
      const thrown = ((): unknown => {
        try {
          createClient({ url } as ClientOptions);
        } catch (err) {
          return err;
        }
        return null;
      })();
      expect(thrown, JSON.stringify(url)).to.be.instanceOf(ClientOptionError).and.include({ option: 'url' });
    }
  });

  it('a url that is not http(s) is refused when the client is made, naming it', () => {
    for (const url of ['notaurl', 'ftp://x', 'http://[::1', '', undefined]) {
      let thrown: unknown;
      try {
        createClient({ url } as ClientOptions);
      } catch (err) {
        thrown = err;
      }
      expect(thrown, String(url)).to.be.instanceOf(ClientOptionError).and.instanceOf(TypeError);
      const e = thrown as ClientOptionError;
      expect(e.option).to.equal('url');
      expect(e.message)
        .to.equal(`url: ${e.reason}`)
        .and.match(/^url: must be (a string naming )?an http:\/\/ or https:\/\/ URL/);
      expect(e.reason).to.include(url === undefined ? 'nothing' : JSON.stringify(url));
    }
  });

  it('an apiKey a header cannot carry (a trailing newline, a control or non-ASCII character) is refused when the client is made', () => {
    for (const [apiKey, message] of [
      ['key\n', 'starts or ends with white space'],
      [' key', 'starts or ends with white space'],
      ['ke\u0001y', 'U+0001'],
      ['clé', 'U+00E9'],
      [42, 'must be a string'],
    ] as const) {
      expect(() => createClient({ url: 'http://127.0.0.1:1', apiKey } as ClientOptions), String(apiKey))
        .to.throw(TypeError, message)
        .with.property('message')
        .that.match(/^apiKey: /);
    }
    expect(() => createClient({ url: 'http://127.0.0.1:1', apiKey: 'a key\twith inner space' })).to.not.throw();
  });

  it('refuses a body holding NaN or ±Infinity before sending it (JSON would send null), naming the path', async () => {
    server = await fakeServer([json(202, { task_id: 't1' })]);
    const client = createClient({ url: server.url });
    const err = await client.tasks.submit({ task_type: 'echo', payload: { a: [1, { n: Number.NaN }] } }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(TypeError);
    expect((err as Error).message).to.equal(
      'body.payload.a[1].n: NaN is a number JSON cannot hold (it would be sent, and stored, as null)',
    );
    const inf = await client.tasks.submit({ task_type: 'echo', payload: -Infinity }).catch((e: unknown) => e);
    expect((inf as Error).message).to.match(/^body\.payload: -Infinity/);
    expect(server.seen).to.deep.equal([]);
    // A shared object and a Date are fine.
    const shared = { n: 1 };
    expect(await client.tasks.submit({ task_type: 'echo', payload: { a: shared, b: shared, at: new Date(0) } })).to.deep.equal({
      task_id: 't1',
    });
  });

  it('refuses a body nested deeper than 100 levels before sending it (a RequestBodyError, not a RangeError of JSON.stringify)', async () => {
    server = await fakeServer([json(202, { task_id: 't2' })]);
    const client = createClient({ url: server.url });
    const nested = (depth: number): unknown => {
      let v: unknown = 1;
      for (let i = 0; i < depth; i++) v = [v];
      return v;
    };
    for (const depth of [100, 20_000]) {
      const err = await client.tasks.submit({ task_type: 'echo', payload: nested(depth) }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(RequestBodyError).and.instanceOf(TypeError);
      expect((err as Error).message).to.match(/^body nests deeper than 100 levels/);
    }
    expect(server.seen).to.deep.equal([]);
    // 99 levels of payload are 100 of body: sent (the service then judges it).
    expect(await client.tasks.submit({ task_type: 'echo', payload: nested(99) })).to.deep.equal({ task_id: 't2' });
  });

  it('refuses, before sending, what plain JavaScript can pass: an invalid Date, a BigInt, a cycle, a submission that is not an object', async () => {
    server = await fakeServer([json(202, { task_id: 't3' })]);
    const client = createClient({ url: server.url });
    const refusal = async (call: () => Promise<unknown>) => {
      const err = await call().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(RequestBodyError);
      return (err as Error).message;
    };
    // JSON writes an invalid Date as null: the task would run at once instead of at its time.
    expect(await refusal(() => client.tasks.submit({ task_type: 'echo', scheduled_at: new Date('x') as never }))).to.equal(
      'body.scheduled_at: an invalid Date (its time is NaN), which JSON would send as null',
    );
    expect(await refusal(() => client.tasks.reschedule('t1', new Date('x')))).to.match(/^scheduled_at: an invalid Date/);
    expect(await refusal(() => client.tasks.submit({ task_type: 'echo', payload: { n: BigInt(1) } }))).to.match(
      /^body cannot be written as JSON: .*BigInt/,
    );
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(await refusal(() => client.tasks.submit({ task_type: 'echo', payload: cycle }))).to.match(
      /^body cannot be written as JSON: .*circular/,
    );
    expect(await refusal(() => client.tasks.submit(null as never))).to.equal('task: must be an object (a task submission); got null');
    expect(await refusal(() => client.tasks.submit(undefined as never))).to.match(/got undefined$/);
    expect(await refusal(() => client.tasks.batch('x' as never))).to.equal('tasks: must be an array of task submissions; got a string');
    // A missing id is a rejection (not a request for the task "undefined", not a synchronous throw).
    for (const call of [() => client.tasks.get(undefined as never), () => client.tasks.cancel(''), () => client.crons.get(null as never)]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).to.be.instanceOf(TypeError);
      expect((err as Error).message).to.match(
        /^an id is required after \/api\/v1\/(tasks|cron-tasks); got (undefined|an empty string|null)$/,
      );
    }
    expect(server.seen).to.deep.equal([]);
    // An item that is not an object is the service's to name (tasks[0]); the client does not trip on it.
    await client.tasks.batch([null as never]).catch(() => undefined);
    expect(server.seen).to.have.length(1);
  });

  it('times out an answer that does not come (fetchTimeoutMs) with a ConnectionError', async () => {
    server = await fakeServer([() => undefined]);
    const client = createClient({ url: server.url, fetchTimeoutMs: 100, retry: { maxAttempts: 1 } });
    const err = await client.tasks.get('t1').catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConnectionError).and.include({ code: 'ETIMEDOUT' });
  });

  it('fetchTimeoutMs bounds the whole answer: one that trickles in a byte at a time is timed out too', async () => {
    const body = JSON.stringify({ task_id: 't1', status: 'PENDING' });
    const timers: NodeJS.Timeout[] = [];
    server = await fakeServer([
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.flushHeaders();
        // One byte every 50 ms: the whole body takes about 1.6 s, each gap far under the timeout.
        [...body].forEach((ch, i) => timers.push(setTimeout(() => (i === body.length - 1 ? res.end(ch) : res.write(ch)), 50 * (i + 1))));
      },
    ]);
    try {
      const client = createClient({ url: server.url, fetchTimeoutMs: 300, retry: { maxAttempts: 1 } });
      const err = await client.tasks.get('t1').catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ConnectionError).and.include({ code: 'ETIMEDOUT' });
    } finally {
      for (const t of timers) clearTimeout(t);
    }
  });
});

describe('SDK client wait', () => {
  let server: Awaited<ReturnType<typeof fakeServer>> | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  const task = (status: string) => ({ task_id: 't1', status });

  it('long-polls with wait=min(remaining, 60) seconds until the task is terminal', async () => {
    const time = fakeTime();
    // A long-polling server: each answer comes at the end of its wait (the clock moves by it).
    const longPoll =
      (status: string): Handler =>
      (req, res) => {
        const wait = Number(new URL(req.url ?? '', 'http://x').searchParams.get('wait') ?? 0);
        if (status === 'RUNNING') time.advance(wait * 1000);
        json(200, task(status))(req, res, '');
      };
    server = await fakeServer([longPoll('RUNNING'), longPoll('RUNNING'), longPoll('SUCCEEDED')]);
    const client = createClient({ url: server.url, ...time.options });
    expect(await client.tasks.wait('t1', { timeoutMs: 150_000 })).to.deep.equal(task('SUCCEEDED'));
    expect(server.seen.map((s) => s.url)).to.deep.equal([
      '/api/v1/tasks/t1?wait=60',
      '/api/v1/tasks/t1?wait=60',
      '/api/v1/tasks/t1?wait=30',
    ]);
    expect(time.sleeps).to.deep.equal([]);
  });

  it('refuses a timeoutMs that is missing, NaN or negative, and a pollIntervalMs that is not above 0, before any request (they polled without end)', async () => {
    const time = fakeTime();
    server = await fakeServer([json(200, task('RUNNING'))]);
    const client = createClient({ url: server.url, ...time.options });
    const bad: Array<[unknown, RegExp]> = [
      [{}, /timeoutMs must be a number .*got undefined/],
      [{ timeoutMs: Number('x') }, /timeoutMs .*got NaN/],
      [{ timeoutMs: -1 }, /timeoutMs .*got -1/],
      [{ timeoutMs: '5000' }, /timeoutMs .*got 5000/],
      [{ timeoutMs: 1000, pollIntervalMs: 0 }, /pollIntervalMs must be a finite number .*got 0/],
      [{ timeoutMs: 1000, pollIntervalMs: Number.NaN }, /pollIntervalMs .*got NaN/],
    ];
    for (const [options, message] of bad) {
      const err = await client.tasks.wait('t1', options as WaitOptions).catch((e: unknown) => e);
      expect(err, JSON.stringify(options)).to.be.instanceOf(TypeError);
      expect((err as Error).message).to.match(message);
      expect(await client.workflows.wait('w1', options as WaitOptions).catch((e: unknown) => e)).to.be.instanceOf(TypeError);
    }
    expect(server.seen).to.deep.equal([]);
  });

  it("a wait's long poll gives its answer the wait plus fetchTimeoutMs (not 30 s), and nothing is retried after the wait's end", async () => {
    server = await fakeServer([() => undefined]); // accepts, never answers
    const client = createClient({ url: server.url, fetchTimeoutMs: 100 });
    const err = await client.tasks.wait('t1', { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConnectionError).and.include({ code: 'ETIMEDOUT' });
    expect(server.seen.map((s) => s.url)).to.deep.equal(['/api/v1/tasks/t1?wait=0.2']);
  });

  it('polls every pollIntervalMs a server that ignores wait, and rejects with WaitTimeoutError carrying the last view', async () => {
    const time = fakeTime();
    server = await fakeServer([json(200, task('RUNNING'))]);
    const client = createClient({ url: server.url, ...time.options });
    const err = await client.tasks.wait('t1', { timeoutMs: 2000, pollIntervalMs: 500 }).catch((e: unknown) => e);
    expect(err)
      .to.be.instanceOf(WaitTimeoutError)
      .and.deep.include({ id: 't1', timeoutMs: 2000, last: task('RUNNING') });
    expect(time.sleeps).to.deep.equal([500, 500, 500, 500]);
    expect(server.seen.map((s) => s.url)).to.deep.equal([
      '/api/v1/tasks/t1?wait=2',
      '/api/v1/tasks/t1?wait=1.5',
      '/api/v1/tasks/t1?wait=1',
      '/api/v1/tasks/t1?wait=0.5',
      '/api/v1/tasks/t1',
    ]);
  });

  it('falls back to plain polling when the server refuses wait, and waits for workflows by their terminal statuses', async () => {
    const time = fakeTime();
    server = await fakeServer([
      apiError(400, 'VALIDATION_FAILED', { field: 'wait' }),
      json(200, { workflow_id: 'w1', status: 'RUNNING' }),
      json(200, { workflow_id: 'w1', status: 'CANCELLED' }),
    ]);
    const client = createClient({ url: server.url, ...time.options });
    expect(await client.workflows.wait('w1', { timeoutMs: 10_000 })).to.deep.equal({ workflow_id: 'w1', status: 'CANCELLED' });
    expect(server.seen.map((s) => s.url)).to.deep.equal(['/api/v1/workflows/w1?wait=10', '/api/v1/workflows/w1', '/api/v1/workflows/w1']);
  });

  it('a service restarting during the wait (503 with Retry-After, more times than retry.maxAttempts) is tried again until the deadline', async () => {
    const time = fakeTime();
    const away = apiError(503, 'SERVICE_UNAVAILABLE', {}, { 'retry-after': '1' });
    server = await fakeServer([json(200, task('RUNNING')), away, away, away, away, away, json(200, task('SUCCEEDED'))]);
    const client = createClient({ url: server.url, ...time.options });
    expect(await client.tasks.wait('t1', { timeoutMs: 60_000, pollIntervalMs: 100 })).to.deep.equal(task('SUCCEEDED'));
    expect(time.sleeps).to.deep.equal([100, 1000, 1000, 1000, 1000, 1000]);
    // Past its deadline nothing is tried again: the last 503 is the answer.
    const late = fakeTime();
    server.seen.length = 1; // the handlers start over at the first 503
    const err = await createClient({ url: server.url, ...late.options })
      .tasks.wait('t1', { timeoutMs: 2_500, pollIntervalMs: 100 })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(UnavailableError);
  });

  it('rejects with NotFoundError for an unknown id', async () => {
    server = await fakeServer([apiError(404, 'TASK_NOT_FOUND')]);
    const client = createClient({ url: server.url });
    expect(await client.tasks.wait('nope', { timeoutMs: 1000 }).catch((e: unknown) => e)).to.be.instanceOf(NotFoundError);
  });
});
