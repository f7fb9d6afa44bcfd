import FindMyWay from 'find-my-way';
import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * The methods each registered route path answers, so that a known path asked with another method
 * is answered 405 with an `Allow` header (RFC 9110 §15.5.6) instead of 404. fastify 5 has no such
 * answer of its own; the routes are matched by a second find-my-way router (the one fastify routes
 * with, same matching rules: case-sensitive, no trailing-slash folding), filled from `onRoute`.
 */
export class RouteMethods {
  private readonly router = FindMyWay({ defaultRoute: () => undefined });
  private readonly methods = new Set<string>();

  /**
   * Records every route `app` registers from now on (in its child plugins too).
   */
  watch(app: FastifyInstance): void {
    app.addHook('onRoute', (route: RouteOptions) => this.add(route.method, route.url));
  }

  /** Records that `url` (a route pattern: `/api/v1/tasks/:id`) answers `method`. */
  add(method: string | string[], url: string): void {
    for (const m of Array.isArray(method) ? method : [method]) {
      if (this.methods.has(m) && this.router.hasRoute(m as never, url)) continue;
      this.methods.add(m);
      this.router.on(m as never, url, () => undefined);
    }
  }

  /**
   * The methods a concrete `path` (no query string) answers, sorted; empty when no route matches it.
   */
  allowed(path: string): string[] {
    return [...this.methods].filter((m) => this.router.find(m as never, path) !== null).sort();
  }
}
