/**
 * How @fastify/swagger turns the routes into the OpenAPI document: its
 * header, the security schemes every route's declaration refers to
 * (http/route-auth.ts), an operationId for each operation, and one shared
 * Error schema that every error answer refers to.
 */
import { STATUS_CODES } from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import type { SwaggerOptions } from '@fastify/swagger';
import { ErrorSchema } from '@terdut/contract';

/**
 * The operationId of `method url`, made from the method and the path (the
 * `/api` prefix left out, a parameter read as `By<Name>`), so it changes only
 * when the path does, which the contract fixes. Code generators name their
 * functions after it; without one each invents its own.
 *
 * @example operationIdOf('POST', '/api/incidents/:id/acknowledge') // 'postIncidentsByIdAcknowledge'
 */
export function operationIdOf(method: string, url: string): string {
  const segments = url.split('/').filter((segment) => segment !== '');
  if (segments[0] === 'api') segments.shift();
  const words = segments.flatMap((segment) => {
    const parameter = /^[:{]([^}]+)\}?$/.exec(segment)?.[1];
    const text = parameter === undefined ? segment : `by-${parameter}`;
    return text.split(/[^A-Za-z0-9]+/).filter((word) => word !== '');
  });
  const capitalised = words.map((word) => word[0]!.toUpperCase() + word.slice(1));
  return method.toLowerCase() + capitalised.join('');
}

/** The Error schema as the document carries it, and what every error answer refers to. */
const ERROR_SCHEMA = JSON.parse(JSON.stringify(ErrorSchema)) as Record<string, unknown>;
const ERROR_REF = { $ref: '#/components/schemas/Error' };

type Json = Record<string, unknown>;

/** What @fastify/swagger writes for an answer whose schema has no description. */
const PLACEHOLDER = 'Default Response';

/** What an error status means on this API, for every operation that can answer it. */
const ERROR_MEANINGS: Record<string, string> = {
  '400': 'Not valid: the error names the field that is wrong and why; nothing was changed',
  '401':
    'No valid credentials: an API key (Authorization: Bearer), a session cookie, or the token this operation takes',
  '403':
    "Authenticated but not allowed: an admin's operation, another person's object, or a session's change without its X-CSRF-Token",
  '404': 'No such object',
  '408': 'The body did not arrive in time; send it again',
  '409':
    "Not possible in the object's current state (for example, the incident is resolved); the error says why",
  '413': 'The body is larger than this operation accepts',
  '415': 'The body is not JSON (Content-Type: application/json), or it is compressed',
  '429': 'Too many requests: wait the seconds Retry-After gives',
  '502': 'A server this one depends on answered badly; the error names it',
  '503': 'Not available yet (starting, or a dependency is down); try again',
};

/** The answer's own description, else what its status means here, else the status's reason phrase. */
function describedAnswer(status: string, response: Json): Json {
  if (response.description !== PLACEHOLDER && response.description !== undefined) return response;
  return { ...response, description: ERROR_MEANINGS[status] ?? STATUS_CODES[Number(status)] ?? status };
}

/**
 * Lists no content for answers that cannot have a body, and replaces each
 * error answer's copy of the Error schema with a reference to
 * `components.schemas.Error`, so a client generator makes one error type, not
 * one per operation and status. A copy that differs is left as it is (and
 * the document's test names it).
 */
function shapeResponses(document: Json): Json {
  const components = (document.components ?? {}) as Json;
  components.schemas = { ...(components.schemas as Json | undefined), Error: ERROR_SCHEMA };
  document.components = components;
  for (const item of Object.values((document.paths ?? {}) as Record<string, Json>)) {
    for (const operation of Object.values(item) as Json[]) {
      const responses = operation.responses as Record<string, Json> | undefined;
      for (const [status, answer] of Object.entries(responses ?? {})) {
        const response = describedAnswer(status, answer);
        responses![status] = response;
        // 204 and 304 never carry content (RFC 9110 §15.3.5, §15.4.5); a route's
        // schema for them documents the status, not a body.
        if (status === '204' || status === '304') {
          responses![status] = { description: response.description };
          continue;
        }
        if (Number(status) < 400) continue;
        const content = response.content as Record<string, { schema?: unknown }> | undefined;
        if (content === undefined) continue;
        responses![status] = {
          ...response,
          content: Object.fromEntries(
            Object.entries(content).map(([type, media]) => [
              type,
              isDeepStrictEqual(media.schema, ERROR_SCHEMA) ? { ...media, schema: ERROR_REF } : media,
            ]),
          ),
        };
      }
    }
  }
  return document;
}

/** The @fastify/swagger options of the server (app.ts registers them before the routes). */
export function openApiOptions(version: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'terdut-server',
        version,
        description: 'On-call and incident manager for Prometheus teams. See api-contract.md.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: '64-hex-character API key' },
          session: {
            type: 'apiKey',
            in: 'cookie',
            name: 'terdut_session',
            description: 'browser session from /auth/login; state-changing requests also need X-CSRF-Token',
          },
          bootstrapToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'the bootstrap token (bootstrap-protocol.md); only for /api/bootstrap',
          },
          capabilityToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'a signed link for one action on one incident by one person, with an expiry',
          },
        },
      },
      // Each operation states its own requirement (http/route-auth.ts); nothing is implied.
      security: [],
    },
    transform: ({ schema, url, route }) => {
      if (schema?.hide) return { schema, url };
      const method = ([] as string[]).concat(route.method)[0]!;
      const operationId = (schema as { operationId?: string } | undefined)?.operationId;
      return { schema: { ...schema, operationId: operationId ?? operationIdOf(method, url) }, url };
    },
    transformObject: (documents) =>
      'openapiObject' in documents ? shapeResponses(documents.openapiObject) : documents.swaggerObject,
  };
}
