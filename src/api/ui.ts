import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';

/** Where the dashboard is served (open without a key: it holds no data, its API calls carry the key). */
export const UI_PREFIX = '/ui';

/**
 * The dashboard's folder: `ui/` at the package root, found by walking up from `from` (`src/api` in
 * the sources, `dist/src/api` once compiled). Null when no such folder exists.
 */
export function uiRoot(from: string = __dirname): string | null {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'ui');
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(path.join(candidate, 'index.html'))) return candidate;
    if (path.dirname(dir) === dir) return null;
  }
}

/**
 * True when a request was routed to the dashboard's page or files: decided by the route fastify
 * matched (`/ui`, `/ui/`, `/ui/*`), not by the raw URL, so that no spelling of a path
 * (`/ui/../api/…`, encoded dots) can borrow the dashboard's exemption from the API key.
 * @param routeUrl `request.routeOptions.url` (undefined when no route matched)
 */
export function isUiRoute(routeUrl: string | undefined): boolean {
  return routeUrl === UI_PREFIX || routeUrl === `${UI_PREFIX}/` || routeUrl === `${UI_PREFIX}/*`;
}

/**
 * The dashboard's content security policy: scripts, styles and connections only from this origin
 * (the page talks to the REST API of the process that served it; nothing from a CDN).
 */
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * Serves the built-in dashboard (docs/OPERATIONS.md): the static files of `ui/` (HTML, CSS, vanilla ES
 * modules; no build step, no CDN) under `/ui/`, and the page itself at `/ui` and `/ui/`, through
 * `@fastify/static`. The routes are hidden from `/openapi.json`. The page uses only the public
 * REST API. Does nothing when the `ui/` folder is missing (a trimmed install).
 * @param root the folder to serve (default: {@link uiRoot})
 */
export function registerUi(app: FastifyInstance, root: string | null = uiRoot()): void {
  if (!root) return;
  void app.register(async (ui) => {
    // A path the file server refuses (`/ui/../x`, a malformed escape) is a 404 like any missing
    // file: the app's error handler maps the file server's refusals (api/error-handler.ts).
    await ui.register(fastifyStatic, {
      root,
      prefix: `${UI_PREFIX}/`,
      index: ['index.html'],
      redirect: false,
      schemaHide: true,
      // Reloading the page fetches the current code; ETags make that cheap.
      cacheControl: false,
      setHeaders: (res) => {
        res.setHeader('content-security-policy', CSP);
        res.setHeader('x-content-type-options', 'nosniff');
        res.setHeader('cache-control', 'no-cache');
      },
    });
    ui.get(UI_PREFIX, { schema: { hide: true } }, async (_req, reply) => reply.sendFile('index.html', root));
  });
}
