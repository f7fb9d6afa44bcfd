import { expect } from 'chai';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { apiFixture, ApiFixture } from '../helpers/api-fixture';
import { hashApiKey } from '../../src/tenancy/api-keys';

/** `@seriousme/openapi-schema-validator` is an ES module: load it with a real dynamic import. */
const importEsm = new Function('specifier', 'return import(specifier)') as (s: string) => Promise<any>;

async function validateOpenApi(doc: unknown): Promise<{ valid: boolean; errors?: unknown }> {
  const { Validator } = await importEsm('@seriousme/openapi-schema-validator');
  return new Validator().validate(doc);
}

/** fastify's `/api/v1/tasks/:id` → OpenAPI's `/api/v1/tasks/{id}`. */
const openApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}');

describe('OpenAPI document and reference page (issue 9)', () => {
  describe('open API (no keys)', () => {
    let f: ApiFixture;
    before(async () => {
      f = await apiFixture();
    });
    after(() => f.close());

    it('every route declares a schema with a summary and its answers', () => {
      const documented = f.routes.filter((r) => r.method !== 'HEAD' && !(r.schema as { hide?: boolean } | undefined)?.hide);
      expect(documented.length).to.be.greaterThan(25);
      const missing = documented
        .filter((r) => {
          const s = r.schema as { summary?: string; response?: Record<string, { description?: string }> } | undefined;
          const ok = Object.entries(s?.response ?? {}).filter(([code]) => /^2/.test(code));
          return !s?.summary || ok.length === 0 || ok.some(([, v]) => !v.description);
        })
        .map((r) => `${String(r.method)} ${r.url}`);
      expect(missing, 'routes without summary or documented success answer').to.deep.equal([]);
    });

    it('serves /openapi.json, a valid OpenAPI 3 document listing every route', async () => {
      const res = await f.app.inject({ method: 'GET', url: '/openapi.json' });
      expect(res.statusCode).to.equal(200);
      const doc = res.json();
      expect(doc.openapi).to.match(/^3\./);
      const result = await validateOpenApi(doc);
      expect(result.valid, JSON.stringify(result.errors)).to.equal(true);
      for (const r of f.routes.filter((x) => x.method !== 'HEAD' && !(x.schema as { hide?: boolean } | undefined)?.hide)) {
        const methods = ([] as string[]).concat(r.method as string | string[]).map((m) => m.toLowerCase());
        for (const m of methods) expect(doc.paths[openApiPath(r.url)]?.[m], `${m} ${r.url}`).to.be.an('object');
      }
      expect(doc.paths['/openapi.json']).to.equal(undefined);
      // The traceparent header is documented on the submission routes.
      const params = doc.paths['/api/v1/tasks'].post.parameters as Array<{ in: string; name: string }>;
      expect(params.some((p) => p.in === 'header' && p.name === 'traceparent')).to.equal(true);
      expect(doc.components.securitySchemes.bearerAuth).to.include({ type: 'http', scheme: 'bearer' });
    });

    it('keeps answers whole although response schemas list only some fields', async () => {
      const ack = (
        await f.app.inject({ method: 'POST', url: '/api/v1/tasks', payload: { task_type: 'echo', metadata: { team: 'x' } } })
      ).json();
      const task = (await f.app.inject({ method: 'GET', url: `/api/v1/tasks/${ack.task_id}` })).json();
      expect(task.metadata).to.deep.include({ team: 'x', tenant_id: 'default' });
    });

    it('serves the reference page at /docs from the package, with no remote asset', async () => {
      const page = await f.app.inject({ method: 'GET', url: '/docs/' });
      expect(page.statusCode).to.equal(200);
      expect(page.headers['content-type']).to.match(/text\/html/);
      expect(page.body).to.not.match(/(src|href)="(https?:)?\/\//);
      const bundle = await f.app.inject({ method: 'GET', url: '/docs/static/swagger-ui-bundle.js' });
      expect(bundle.statusCode).to.equal(200);
      const init = await f.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
      expect(init.body).to.match(/validatorUrl["']?\s*:\s*null/);
    });

    it('a path its file server refuses (encoded `..`, a bad escape) → 404 ROUTE_NOT_FOUND, never 500; no file outside is served', async () => {
      // Over a real socket: inject() parses the URL as WHATWG does, which already resolves `%2e%2e`.
      await f.app.listen({ host: '127.0.0.1', port: 0 });
      const { port } = f.app.server.address() as AddressInfo;
      const raw = (method: string, path: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port, method, path }, (res) => {
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          });
          req.on('error', reject);
          req.end();
        });
      for (const path of ['/docs/static/%2e%2e/package.json', '/docs/static/%2e%2e/', '/docs/static/%2e%2e/%2e%2e/%2e%2e/etc/passwd']) {
        for (const method of ['GET', 'HEAD']) {
          const res = await raw(method, path);
          expect(res.status, `${method} ${path}: ${res.body}`).to.equal(404);
          if (method === 'GET') expect(JSON.parse(res.body).error.code).to.equal('ROUTE_NOT_FOUND');
        }
      }
    });
  });

  describe('with API keys', () => {
    let f: ApiFixture;
    before(async () => {
      f = await apiFixture({ apiKeys: [{ sha256: hashApiKey('acme-key'), tenant: 'acme' }] });
    });
    after(() => f.close());

    it('serves /openapi.json and /docs without a key, and the document requires the bearer scheme', async () => {
      const res = await f.app.inject({ method: 'GET', url: '/openapi.json' });
      expect(res.statusCode).to.equal(200);
      const doc = res.json();
      expect(doc.security).to.deep.equal([{ bearerAuth: [] }]);
      expect(doc.paths['/healthz'].get.security).to.deep.equal([]);
      expect((await validateOpenApi(doc)).valid).to.equal(true);
      expect((await f.app.inject({ method: 'GET', url: '/docs/' })).statusCode).to.equal(200);
      expect((await f.app.inject({ method: 'GET', url: '/docs/static/swagger-ui.css' })).statusCode).to.equal(200);
    });

    it('still refuses the API itself without a key', async () => {
      expect((await f.app.inject({ method: 'GET', url: '/api/v1/tasks' })).statusCode).to.equal(401);
      expect((await f.app.inject({ method: 'GET', url: '/docsx' })).statusCode).to.equal(401);
    });
  });
});
