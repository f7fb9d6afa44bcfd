import { expect } from 'chai';
import net from 'node:net';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { rawRequest } from '../helpers/raw-http';
import { TEST_KEYS as KEYS, testApiKeys as apiKeys } from '../helpers/api-keys';

/** Two `Authorization` headers (Node keeps only the first in `req.headers`): refused before anything runs. */
describe('REST: a request with two Authorization headers', () => {
  for (const keys of [apiKeys, []]) {
    describe(keys.length ? 'with API keys' : 'without API keys', () => {
      let f: ApiFixture;
      let port: number;
      before(async () => {
        f = await apiFixture({ apiKeys: keys });
        await f.app.listen({ port: 0, host: '127.0.0.1' });
        port = (f.app.server.address() as net.AddressInfo).port;
      });
      after(async () => f.close());

      it('is answered 400 DUPLICATE_HEADER naming the header, whatever the two values and the path', async () => {
        for (const [second, path] of [
          [KEYS.acme, '/api/v1/tasks'],
          [KEYS.admin, '/api/v1/tasks'],
          ['nope', '/api/v1/tenants'],
          [KEYS.admin, '/healthz'],
        ]) {
          const res = await rawRequest(port, [
            `GET ${path} HTTP/1.1`,
            'host: localhost',
            `authorization: Bearer ${KEYS.admin}`,
            `Authorization: Bearer ${second}`,
          ]);
          expect(res.status, `${second} ${path}`).to.equal(400);
          expect(res.body.error).to.deep.include({ code: 'DUPLICATE_HEADER' });
          expect(res.body.error.details).to.deep.equal({ field: 'authorization', count: 2 });
        }
      });

      it('one Authorization header is served as before', async () => {
        const res = await rawRequest(port, ['GET /api/v1/tasks HTTP/1.1', 'host: localhost', `authorization: Bearer ${KEYS.admin}`]);
        expect(res.status).to.equal(200);
        expect(res.body.tasks).to.deep.equal([]);
      });
    });
  }
});
