import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError, notFound, unauthorized } from '../../errors.ts';
import { access } from '../../http/route-auth.ts';
import { methodNotAllowed } from '../../http/authentication.ts';

/** Where `npm run build:web` writes the bundle (packages/web/dist). */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../../../web/dist/', import.meta.url));

/**
 * The app's scripts and styles come only from this origin, nothing inline;
 * no other site may frame it (clickjacking an Acknowledge or Resolve).
 */
export const WEB_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const CONTENT_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  woff2: 'font/woff2',
};

function secureHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', WEB_CONTENT_SECURITY_POLICY)
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff');
}

/**
 * The path a request names, the way a router that forgave every spelling
 * would read it: absolute-form scheme and host dropped, percent-escapes
 * decoded, slashes collapsed (a backslash is one, as browsers and WHATWG URL
 * parsers read it), dot segments resolved, lower case. Used only to keep
 * API-looking spellings (`/API/ME`, `//api/me`, `/api%2Fme`, `/api\me`) away
 * from the app's HTML; undefined when the escapes do not decode.
 */
export function apiLookingPath(url: string): boolean | undefined {
  let path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').split(/[?#]/)[0]!;
  try {
    path = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  const segments: string[] = [];
  for (const segment of path.toLowerCase().split(/[/\\]/)) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') segments.pop();
    else segments.push(segment.split(';')[0]!);
  }
  return segments[0] === 'api' || segments[0] === 'auth';
}

/**
 * The web app (packages/web), same origin as /api so the session cookie and
 * X-CSRF-Token work. `/assets/<name>-<hash>.<ext>` are cached for a year
 * (the name changes with the content); every other GET outside /api and
 * /auth answers the app's HTML, never cached, so deep links such as
 * `/incidents/42` work on reload and a new release is picked up at once.
 * Unknown /api and /auth paths stay 404 JSON.
 */
export function webAppRoutes(options: { dir?: string } = {}) {
  const dir = options.dir ?? DEFAULT_WEB_DIR;
  return async (app: FastifyInstance): Promise<void> => {
    app.get<{ Params: { name: string } }>(
      '/assets/:name',
      { schema: { hide: true }, config: { auth: access.public } },
      async (request, reply) => {
        const { name } = request.params;
        const type = CONTENT_TYPES[name.split('.').pop() ?? ''];
        if (!/^[\w.-]+$/.test(name) || name.startsWith('.') || type === undefined)
          throw notFound(`asset ${name}`);
        let body: Buffer;
        try {
          body = await readFile(join(dir, 'assets', name));
        } catch {
          throw new ApiError(
            404,
            `asset ${name} not found; the page that asked for it is older than the installed web app: reload`,
          );
        }
        return secureHeaders(reply)
          .header('content-type', type)
          .header('cache-control', 'public, max-age=31536000, immutable')
          .send(body);
      },
    );

    // Declared signedInIfAny, not public: a path under /api or /auth in any
    // spelling answers as an unmatched protected path does (401 to anonymous
    // callers, who learn nothing about which paths exist; 404 to others).
    app.get(
      '/*',
      { schema: { hide: true }, config: { auth: access.signedInIfAny } },
      async (request, reply) => {
        const path = request.url.split('?')[0]!;
        const apiLooking = apiLookingPath(request.url);
        if (apiLooking !== false) {
          // A path served with other methods only (GET on the webhook): 405, as for every method.
          const served = request.server.routeMethods.otherMethodsAt(path, request.method);
          if (served.methods.length > 0 && (served.anyPublic || request.principal !== null)) {
            throw methodNotAllowed(reply, request.method, path, served.methods);
          }
          if (request.principal === null)
            throw unauthorized(
              'authentication required: send Authorization: Bearer <api key>, or sign in at /auth/login',
            );
          throw new ApiError(404, `no route for ${request.method} ${path}`);
        }
        let html: Buffer;
        try {
          html = await readFile(join(dir, 'index.html'));
        } catch {
          return secureHeaders(reply)
            .status(503)
            .header('content-type', 'text/plain; charset=utf-8')
            .header('cache-control', 'no-store')
            .send(
              `The terdut web app is not built (no ${join(dir, 'index.html')}). ` +
                'Run `npm run build:web` (npm start does it by itself), then reload. The API at /api works without it.',
            );
        }
        return secureHeaders(reply)
          .header('content-type', 'text/html; charset=utf-8')
          .header('cache-control', 'no-cache')
          .send(html);
      },
    );
  };
}
