import { expect } from 'chai';
import { apiFixture, ApiFixture, sendJson } from '../helpers/api-fixture';
import { TEST_KEYS as KEYS, testApiKeys as apiKeys } from '../helpers/api-keys';

/**
 * A query string that cannot be percent-decoded was used as the literal text sent (fastify's parser
 * keeps a value it cannot decode): `?queue=q%FF` listed the tasks of a queue named `q%FF`, and
 * `?tenant=%ED%A0%80` (a lone surrogate's UTF-8 form) was a 200. It is refused as an undecodable
 * path is: 400 VALIDATION_FAILED, field `url`, on every route.
 */
describe('REST: a query string that cannot be percent-decoded', () => {
  let f: ApiFixture;
  beforeEach(async () => {
    f = await apiFixture();
  });
  afterEach(async () => f.close());

  async function expectUrlRefused(url: string, headers: Record<string, string> = {}): Promise<void> {
    const res = await f.app.inject({ method: 'GET', url, headers });
    expect(res.statusCode, `${url}: ${res.body}`).to.equal(400);
    const { error } = res.json();
    expect(error.code, url).to.equal('VALIDATION_FAILED');
    expect(error.details.field, url).to.equal('url');
    expect(error.details.reason, url).to.include('is not a valid url component');
  }

  it('is 400 VALIDATION_FAILED with field url, as the same bytes in the path are', async () => {
    const path = await f.app.inject({ method: 'GET', url: '/api/v1/tasks/%FF' });
    expect(path.statusCode).to.equal(400);
    expect(path.json().error).to.deep.include({ code: 'VALIDATION_FAILED' });
    expect(path.json().error.details.field).to.equal('url');
    for (const query of [
      'task_type=%FF', // not UTF-8
      'tenant=%ED%A0%80', // a lone surrogate encoded as UTF-8
      'queue=%C0%80', // an overlong NUL
      'queue=q%FF',
      'queue=%E2%82', // a sequence cut short
      'queue=100%', // a % without two hex digits
      'queue=%zz',
      '%FF=1', // in a name
      'limit=10&queue=ok&idempotency_key=%F0%28%8C%28',
    ]) {
      await expectUrlRefused(`/api/v1/tasks?${query}`);
    }
  });

  it('on every route: another API route, the probes, the API description, and a route that does not exist', async () => {
    for (const url of [
      '/api/v1/dead-letter?task_type=%FF',
      '/api/v1/cron-tasks?x=%FF',
      '/healthz?x=%FF',
      '/readyz?x=%C0%80',
      '/openapi.json?x=%ED%A0%80',
      '/no-such-route?x=%FF',
    ]) {
      await expectUrlRefused(url);
    }
  });

  it('also with API keys, before authentication (as an undecodable path is)', async () => {
    const keyed = await apiFixture({ apiKeys });
    try {
      for (const headers of [{}, { authorization: `Bearer ${KEYS.acme}` }]) {
        const res = await keyed.app.inject({ method: 'GET', url: '/api/v1/tasks?queue=q%FF', headers });
        expect(res.statusCode, res.body).to.equal(400);
        expect(res.json().error.details.field).to.equal('url');
      }
    } finally {
      await keyed.close();
    }
  });

  it('a queue literally named q%FF is listed with its name percent-encoded (q%25FF), and decodable escapes work as before', async () => {
    const stored = await sendJson(f, 'POST', '/api/v1/tasks', { task_type: 'noop', queue: 'q%FF', scheduled_at: '2099-01-01T00:00:00Z' });
    expect(stored.statusCode, stored.body).to.equal(202);
    const listed = await f.app.inject({ method: 'GET', url: '/api/v1/tasks?queue=q%25FF' });
    expect(listed.statusCode, listed.body).to.equal(200);
    expect(listed.json().tasks.map((t: { queue: string }) => t.queue)).to.deep.equal(['q%FF']);
    const utf8 = await f.app.inject({ method: 'GET', url: '/api/v1/tasks?queue=%C3%BC+x&task_type=a%20b' });
    expect(utf8.statusCode, utf8.body).to.equal(200);
    expect(utf8.json().tasks).to.deep.equal([]);
  });
});
