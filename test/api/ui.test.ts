import { expect } from 'chai';
import net from 'node:net';
import { hashApiKey } from '../../src/tenancy/api-keys';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';

const ADMIN = 'key-admin-ui-1';

/** The dashboard's static files (issue 9): served without a key, nothing else opened by them. */
describe('REST: dashboard files at /ui', () => {
  let f: ApiFixture;
  before(async () => {
    f = await apiFixture({ apiKeys: [{ sha256: hashApiKey(ADMIN), admin: true }] });
  });
  after(async () => f.close());

  it('/ui and /ui/ serve the HTML page without a key when keys are configured', async () => {
    for (const url of ['/ui', '/ui/', '/ui?x=1']) {
      const res = await f.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).to.equal(200);
      expect(res.headers['content-type']).to.match(/^text\/html/);
      expect(res.body).to.include('<script type="module" src="/ui/js/app.js">');
      expect(res.headers['content-security-policy']).to.include("script-src 'self'");
    }
  });

  it('serves the JavaScript modules and the stylesheet without a key', async () => {
    for (const [url, type] of [
      ['/ui/js/app.js', /javascript/],
      ['/ui/js/pages/tasks.js', /javascript/],
      ['/ui/app.css', /text\/css/],
    ] as const) {
      const res = await f.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).to.equal(200);
      expect(res.headers['content-type'], url).to.match(type);
    }
  });

  it('a missing file is the usual 404 envelope; the API still needs the key', async () => {
    const missing = await f.app.inject({ method: 'GET', url: '/ui/nope.js' });
    expect(missing.statusCode).to.equal(404);
    expect(missing.json().error.code).to.equal('ROUTE_NOT_FOUND');
    expect((await f.app.inject({ method: 'GET', url: '/api/v1/tasks' })).statusCode).to.equal(401);
    expect((await f.app.inject({ method: 'GET', url: '/uix' })).statusCode).to.equal(401);
    expect(
      (await f.app.inject({ method: 'GET', url: '/api/v1/tasks', headers: { authorization: `Bearer ${ADMIN}` } })).statusCode,
    ).to.equal(200);
  });

  it('a path under /ui cannot climb out of the folder or reach the API', async () => {
    for (const url of ['/ui/../api/v1/tasks', '/ui/..%2Fapi%2Fv1%2Ftasks', '/ui/%2e%2e/package.json', '/ui/../package.json']) {
      const res = await f.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).to.be.oneOf([400, 401, 403, 404]);
      expect(res.body, url).to.not.include('"tasks"');
      expect(res.body, url).to.not.include('actor-task-scheduler');
    }
  });

  /** The raw answer to `GET target` sent as written on a socket (no client resolves its dots first). */
  const rawGet = (port: number, target: string) =>
    new Promise<string>((resolve, reject) => {
      const sock = net.connect(port, '127.0.0.1', () => sock.write(`GET ${target} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`));
      let out = '';
      sock.on('data', (d) => (out += d));
      sock.on('end', () => resolve(out));
      sock.on('error', reject);
    });

  it('a raw /ui/../api/… request on a socket (no URL normalising client) does not get past the key', async () => {
    const address = await f.app.listen({ port: 0, host: '127.0.0.1' });
    const port = Number(new URL(address).port);
    for (const target of ['/ui/../api/v1/tasks', '/ui/%2e%2e/api/v1/tasks', '/ui/..%2fapi/v1/tasks']) {
      const raw = await rawGet(port, target);
      expect(raw, target).to.match(/^HTTP\/1\.1 (401|404) /);
      expect(raw, target).to.not.include('"tasks"');
    }
    // What the file server refuses (a path outside its root) is the usual 404, on a socket
    // where no client resolves the dots first.
    for (const target of ['/ui/%2e%2e/package.json', '/ui/..%2f..%2fpackage.json', '/ui/%2e%2e/%2e%2e/etc/passwd']) {
      const raw = await rawGet(port, target);
      expect(raw, target).to.match(/^HTTP\/1\.1 404 /);
      expect(raw, target).to.include('ROUTE_NOT_FOUND');
    }
  });

  it('the dashboard routes are not in /openapi.json', async () => {
    const doc = (await f.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/ui'))).to.deep.equal([]);
  });
});
