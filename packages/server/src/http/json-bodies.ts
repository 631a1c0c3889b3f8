import type { FastifyInstance } from 'fastify';

/**
 * A request that says its body is JSON but sends none has no body, rather
 * than an invalid one: `curl -X DELETE … -H 'Content-Type: application/json'`,
 * as the README's examples set that header on every call, and HTTP clients
 * that send the header whatever the method. Fastify's own JSON parser
 * refuses an empty body with 400; it still parses every other body (with
 * its guard against `__proto__` and `constructor` keys). A route that needs
 * a body still says so: its validation answers 400 naming the body.
 */
export function installJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const body = raw.toString(); // a string already (parseAs)
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    // Fastify's own parser answers through `done`, at once.
    void parseJson(request, body, done);
  });
}
