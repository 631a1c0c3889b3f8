import type { FastifyRequest } from 'fastify';

/**
 * Query parameters that carry a credential in a URL: a page's acknowledge
 * link (`token`), the OpenID Connect callback (`code`, `state`), and what
 * clients put there by habit though terdut reads none of it there: any name
 * with `token`, `secret`, `key`, `password` or `auth` in it
 * (`access_token`, `api_key`, `apikey`, …).
 */
const SECRET_QUERY_PARAMETER = /^(code|state)$|token|secret|key|passw|auth/i;
// Paths whose last segment is the credential (the calendar feed's secret URL).
const SECRET_PATH = /^(\/api\/calendar\/)[^/?#]+/;
// Any path segment holding 64 hex characters: a feed's secret under another spelling of its path
// (`//api/calendar/…`, `/API/…`, a gateway's prefix), which is logged as a 401, or a pasted API key.
const SECRET_SEGMENT = /(?<=\/)[^/]*[0-9a-f]{64}[^/]*/gi;

/** `url` with every credential it carries replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const queryAt = url.indexOf('?');
  const path = (queryAt === -1 ? url : url.slice(0, queryAt))
    .replace(SECRET_PATH, '$1[redacted]')
    .replace(SECRET_SEGMENT, '[redacted]');
  if (queryAt === -1) return path;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0]!;
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // A malformed escape: compare it as written.
      }
      return SECRET_QUERY_PARAMETER.test(decoded) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${path}?${query}`;
}

/**
 * The request as the log shows it (what Fastify's own serializer gives,
 * with the URL's credentials redacted): secrets never reach a log line,
 * including those that travel in a URL.
 */
export function loggedRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
