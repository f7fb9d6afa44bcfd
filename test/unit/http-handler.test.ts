import { expect } from 'chai';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { http as httpHandler } from '../../src/handlers/builtins/http';
import { HandlerContext, isPermanent } from '../../src/handlers/types';
import { describeError } from '../../src/domain/attempt-error';

function ctx(): HandlerContext {
  return {
    taskId: 't-1',
    attempt: 1,
    idempotencyKey: null,
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    log: () => undefined,
    upstreamResults: {},
    traceContext: null,
    lastCheckpoint: null,
    checkpoint: async () => undefined,
    progress: () => undefined,
  };
}

async function failure(payload: unknown): Promise<unknown> {
  try {
    await httpHandler(payload, ctx());
  } catch (err) {
    return err;
  }
  throw new Error('expected the handler to fail');
}

/** The http built-in: 2xx ok, 4xx and bad payloads permanent, 5xx and network errors retryable. */
describe('http handler', () => {
  let server: http.Server;
  let base: string;
  before(async () => {
    server = http.createServer((req, res) => {
      const status = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('status') ?? 200);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ got: req.headers['idempotency-key'] }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => new Promise<void>((r) => server.close(() => r())));

  it('2xx → {status, body}, with an idempotency-key header', async () => {
    expect(await httpHandler({ url: `${base}/?status=201` }, ctx())).to.deep.equal({ status: 201, body: { got: 't-1' } });
  });

  it('4xx → permanent; 5xx → retryable', async () => {
    expect(isPermanent(await failure({ url: `${base}/?status=404` }))).to.equal(true);
    expect(isPermanent(await failure({ url: `${base}/?status=503` }))).to.equal(false);
  });

  it('bad url, scheme, method or header → permanent (retrying cannot help)', async () => {
    for (const payload of [
      {},
      { url: 'not a url' },
      { url: 'file:///etc/passwd' },
      { url: base, method: 'BAD METHOD' },
      { url: base, method: 5 },
      { url: base, headers: { 'bad name': 'x' } },
    ]) {
      expect(isPermanent(await failure(payload)), JSON.stringify(payload)).to.equal(true);
    }
  });

  it('a closed port → retryable network error', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const err = (await failure({ url: `http://127.0.0.1:${port}/` })) as Error & { code?: string; cause?: unknown };
    expect(isPermanent(err)).to.equal(false);
    // The network cause is named, not only undici's "fetch failed"; the original stays as its cause.
    expect(err.message).to.equal(`POST http://127.0.0.1:${port}/: fetch failed: connect ECONNREFUSED 127.0.0.1:${port}`);
    expect(err).to.include({ name: 'HttpRequestError', code: 'ECONNREFUSED' });
    expect(describeError(err).cause).to.include({ message: 'fetch failed', type: 'TypeError' });
  });

  it('an HTTP failure carries its status (kept as http_status)', async () => {
    const notFound = await failure({ url: `${base}/?status=404`, method: 'GET' });
    expect(notFound).to.include({ status: 404, message: `HTTP 404 from GET ${base}/` });
    expect(describeError(notFound)).to.include({ type: 'PermanentError', httpStatus: 404 });
    expect(describeError(await failure({ url: `${base}/?status=503` }))).to.include({ type: 'Error', httpStatus: 503 });
  });
});
