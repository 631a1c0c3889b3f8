import type { DeclaredRoute } from './authentication.ts';
import { isPublic } from './route-auth.ts';

/** What the routes serve at one concrete path. */
export interface MethodsAtPath {
  /** Every method some route serves at the path, sorted (HEAD where GET is). Empty: no route has the path. */
  methods: string[];
  /** Whether one of those routes is public, so anyone may hear which methods it has. */
  anyPublic: boolean;
}

interface CompiledRoute {
  pattern: RegExp;
  /** Its `:param` segments: where a static route and a parametric one both match, the resource is the static one's. */
  params: number;
  route: DeclaredRoute;
}

/** The routes' methods by concrete path, for 405 answers; built from the routes once they have all registered. */
export interface RouteMethods {
  /**
   * The methods served at `path` when `method` is not one of them, for a 405
   * with its `Allow` header (RFC 9110 §15.5.6: a method the server knows but
   * the target does not support). Empty `methods` when no route has the path,
   * and when one has `method` too: then the router refused the request for
   * another reason (a parameter over its length limit), and it stays "no route".
   */
  otherMethodsAt(path: string, method: string): MethodsAtPath;
  /** Whether some route has exactly this path, without parameters (`/api/schedule/current`). */
  isStaticPath(path: string): boolean;
}

/**
 * The methods the router serves at each path. A route's `:param` matches one
 * path segment, as the router's does. Where routes with fewer parameters
 * match too (`/api/schedule/current` beside `/api/schedule/:id`), the path
 * names their resource and only their methods count. Catch-all routes (`/*`,
 * the web app) are left out: they answer 404 for API paths themselves.
 *
 * @example routeMethods(routes).otherMethodsAt('/api/incidents/7', 'PUT') // { methods: ['GET', 'HEAD'], anyPublic: false }
 */
export function routeMethods(routes: readonly DeclaredRoute[]): RouteMethods {
  let compiled: CompiledRoute[] = [];
  let staticPaths = new Set<string>();
  let compiledCount = -1;
  // Routes register before the server listens; compile once they have all come.
  const compile = (): void => {
    if (compiledCount === routes.length) return;
    const served = routes.filter((route) => !route.url.includes('*'));
    compiled = served.map((route) => ({
      route,
      pattern: routePattern(route.url),
      params: route.url.split('/').filter((segment) => segment.startsWith(':')).length,
    }));
    staticPaths = new Set(compiled.filter(({ params }) => params === 0).map(({ route }) => route.url));
    compiledCount = routes.length;
  };
  return {
    otherMethodsAt(path, method) {
      compile();
      const candidates = compiled.filter(({ pattern }) => pattern.test(path));
      const fewestParams = Math.min(...candidates.map(({ params }) => params));
      const matching = candidates.filter(({ params }) => params === fewestParams).map(({ route }) => route);
      const methods = [...new Set(matching.map((route) => route.method))].sort();
      return {
        methods: methods.includes(method) ? [] : methods,
        anyPublic: matching.some((route) => isPublic(route.auth, false)),
      };
    },
    isStaticPath(path) {
      compile();
      return staticPaths.has(path);
    },
  };
}

function routePattern(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) =>
      segment.startsWith(':')
        ? '[^/]+'
        : segment.replace(/[.*+?^${}()|[\]\\]/g, (character) => `\\${character}`),
    )
    .join('/');
  return new RegExp(`^${source}$`);
}
