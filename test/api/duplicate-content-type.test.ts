import { expect } from 'chai';
import net from 'node:net';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { rawRequest } from '../helpers/raw-http';

/**
 * Two `Content-Type` headers (Node keeps only the first in `req.headers`): the first won, so
 * `application/json` then `text/plain` was stored and the reverse was 415. Like two
 * `Authorization` headers, they are refused (400 DUPLICATE_HEADER) before anything runs.
 * (Raw sockets: `app.inject` joins a header's copies into one line.)
 */
describe('REST: a request with two Content-Type headers', () => {
  let f: ApiFixture;
  let port: number;
  before(async () => {
    f = await apiFixture();
    await f.app.listen({ port: 0, host: '127.0.0.1' });
    port = (f.app.server.address() as net.AddressInfo).port;
  });
  after(async () => f.close());

  const submit = (types: string[]) =>
    rawRequest(port, ['POST /api/v1/tasks HTTP/1.1', 'host: localhost', ...types.map((t) => `Content-Type: ${t}`)], '{"task_type":"noop"}');

  it('is answered 400 DUPLICATE_HEADER naming content-type, whatever their order or values; nothing stored', async () => {
    for (const types of [
      ['application/json', 'text/plain'],
      ['text/plain', 'application/json'],
      ['application/json', 'application/json'],
      ['application/json', 'application/json; charset=utf-8', 'text/plain'],
    ]) {
      const res = await submit(types);
      expect(res.status, types.join(' + ')).to.equal(400);
      expect(res.body.error).to.deep.include({ code: 'DUPLICATE_HEADER' });
      expect(res.body.error.details).to.deep.equal({ field: 'content-type', count: types.length });
    }
    expect(f.stored).to.have.length(0);
  });

  it('one Content-Type header is served as before', async () => {
    const before = f.stored.length;
    const res = await submit(['application/json']);
    expect(res.status).to.equal(202);
    expect(f.stored).to.have.length(before + 1);
    expect((await submit(['text/plain'])).status).to.equal(415);
  });
});
