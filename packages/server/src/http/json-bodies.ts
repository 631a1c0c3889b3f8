import type { FastifyInstance } from 'fastify';
import { ApiError, badRequest } from '../errors.ts';
import { jsonShape } from './json-shape.ts';
import { declareErrorStatuses } from './route-auth.ts';

/** The methods whose requests a client may send with a body, which this server then parses. */
const TAKES_A_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Bodies this small cannot hold enough to hurt, and are parsed without looking first. */
const SHAPE_CHECKED_FROM_BYTES = 16 * 1024;
/** Alertmanager's notifications nest 4 deep; the API's other bodies less. */
const MAX_DEPTH = 32;
/** A notification has one object or array per 90 bytes or more (each alert, its labels, its annotations). */
const BYTES_PER_CONTAINER = 16;
/** The largest list the API takes is a notification's 2,000 alerts; objects have tens of keys. */
const MAX_MEMBERS_OF_ONE = 10_000;
/** A notification's members (keys and array elements) are 8 bytes or more each, `"a":"b",` at the least. */
const BYTES_PER_MEMBER = 6;
/** Every body may have this many objects and arrays, and this many members, whatever its size. */
const ALWAYS_ALLOWED = 1000;
const MEMBERS_ALWAYS_ALLOWED = 10_000;
/** A key spelled `__proto__`, escapes included (what Fastify's parser refuses). */
const PROTO_KEY =
  /"(?:_|\\u005[fF])(?:_|\\u005[fF])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[fF])(?:t|\\u0074)(?:o|\\u006[fF])(?:_|\\u005[fF])(?:_|\\u005[fF])"\s*:/;

/**
 * The JSON request bodies of every route, parsed by Fastify's own parser
 * (with its guard against `__proto__` and `constructor` keys), with two
 * differences:
 *
 * - A request that says its body is JSON but sends none has no body, rather
 *   than an invalid one: `curl -X DELETE … -H 'Content-Type: application/json'`,
 *   as the README's examples set that header on every call, and HTTP clients
 *   that send the header whatever the method. A route that needs a body
 *   still says so: its validation answers 400 naming the body.
 * - A large body is refused with 400 before it is parsed when its shape
 *   would take far more heap or time than its size (json-shape.ts): nested
 *   deeper than any request of the API, a list or object far longer than
 *   any the API takes, or more objects, arrays or values than its bytes
 *   carry in any request. The process must outlive, and keep answering
 *   through, any body a key holder can post.
 */
export function installJsonBodies(app: FastifyInstance): void {
  // The API reads JSON only. Fastify also reads text/plain by default, so a
  // text body (what a plain HTML form or a "simple" cross-origin request can
  // send) reached validation as a string and got 400 "body must be object";
  // it is refused with 415, like any other type that is not JSON. An empty
  // one is no body (fetch() labels even `body: ''` text/plain), as for JSON.
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('text/plain', { parseAs: 'string' }, (request, raw, done) => {
    if (raw.length === 0) done(null, undefined);
    else done(unsupportedBodyType(request.headers['content-type']), undefined);
  });
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, raw, done) => {
    const body = raw.toString(); // a string already (parseAs)
    if (body.length === 0) {
      done(null, undefined);
      return;
    }
    if (body.length >= SHAPE_CHECKED_FROM_BYTES) {
      const refusal = shapeRefusal(body);
      if (refusal !== undefined) {
        done(badRequest(refusal), undefined);
        return;
      }
    }
    // Fastify's own parser answers through `done`, at once. It refuses a
    // `__proto__` key as "not valid JSON"; say what is wrong instead.
    void parseJson(request, body, (error, value) => {
      if (error !== null && PROTO_KEY.test(body)) {
        done(
          badRequest('the JSON body has a key named "__proto__", which is not accepted; rename it'),
          undefined,
        );
      } else {
        done(error, value);
      }
    });
  });
  // Every route a body can be sent to can refuse one before its handler,
  // whether it reads one or not: 413 beyond the body limit, 415 for a body
  // that is not JSON or is compressed (content-encoding.ts). Its OpenAPI
  // entry says so.
  app.addHook('onRoute', (route) => {
    if (route.schema === undefined || route.schema.hide === true) return;
    const methods = ([] as string[]).concat(route.method);
    if (route.schema.body === undefined && !methods.some((method) => TAKES_A_BODY.has(method))) return;
    declareErrorStatuses(route, [413, 415]);
  });
}

function shapeRefusal(body: string): string | undefined {
  const shape = jsonShape(body);
  const size = `in ${body.length} characters`;
  if (shape.depth > MAX_DEPTH) {
    return `the JSON body nests ${shape.depth} levels deep; at most ${MAX_DEPTH} are read (an Alertmanager notification nests 4)`;
  }
  if (shape.widest > MAX_MEMBERS_OF_ONE) {
    return `the JSON body has an object or array of ${shape.widest} members; at most ${MAX_MEMBERS_OF_ONE} are read in one`;
  }
  const containers = ALWAYS_ALLOWED + Math.floor(body.length / BYTES_PER_CONTAINER);
  if (shape.containers > containers) {
    return (
      `the JSON body holds ${shape.containers} objects and arrays ${size}; at most ${containers} are read ` +
      `(one per ${BYTES_PER_CONTAINER} characters, beyond the first ${ALWAYS_ALLOWED})`
    );
  }
  const members = MEMBERS_ALWAYS_ALLOWED + Math.floor(body.length / BYTES_PER_MEMBER);
  if (shape.members > members) {
    return (
      `the JSON body holds ${shape.members} values ${size}; at most ${members} are read ` +
      `(one per ${BYTES_PER_MEMBER} characters, beyond the first ${MEMBERS_ALWAYS_ALLOWED})`
    );
  }
  return undefined;
}

/** The 415 of a body whose type the API does not read, naming the type sent and the one it reads. */
export function unsupportedBodyType(contentType: string | undefined): ApiError {
  const sent = (contentType ?? '').slice(0, 80);
  return new ApiError(
    415,
    `a body of type "${sent}" is not accepted; send JSON with Content-Type: application/json`,
  );
}
