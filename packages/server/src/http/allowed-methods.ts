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

/**
 * The methods the router would serve at `path`, for a 405 with its `Allow`
 * header (RFC 9110 §15.5.6: a method the server knows but the target does
 * not support). A route's `:param` matches one path segment, as the router's
 * does. Where routes with fewer parameters match too (`/api/schedule/current`
 * beside `/api/schedule/:id`), the path names their resource and only their
 * methods count. Catch-all routes (`/*`, the web app) are left out: they
 * answer 404 for API paths themselves.
 *
 * @example methodsAt(routes)('/api/incidents/7') // { methods: ['GET', 'HEAD'], anyPublic: false }
 */
export function methodsAt(routes: readonly DeclaredRoute[]): (path: string) => MethodsAtPath {
  let compiled: CompiledRoute[] | undefined;
  let compiledCount = -1;
  return (path) => {
    // Routes register before the server listens; compile once they have all come.
    if (compiled === undefined || compiledCount !== routes.length) {
      compiled = routes
        .filter((route) => !route.url.includes('*'))
        .map((route) => ({
          route,
          pattern: routePattern(route.url),
          params: route.url.split('/').filter((segment) => segment.startsWith(':')).length,
        }));
      compiledCount = routes.length;
    }
    const candidates = compiled.filter(({ pattern }) => pattern.test(path));
    const fewestParams = Math.min(...candidates.map(({ params }) => params));
    const matching = candidates.filter(({ params }) => params === fewestParams).map(({ route }) => route);
    return {
      methods: [...new Set(matching.map((route) => route.method))].sort(),
      anyPublic: matching.some((route) => isPublic(route.auth, false)),
    };
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
