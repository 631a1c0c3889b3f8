import type { FastifyInstance, FastifySchema } from 'fastify';
import { Ajv, type Options } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import { declareErrorStatuses } from './route-auth.ts';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;

const common: Options = {
  useDefaults: true,
  removeAdditional: false,
  // allErrors makes a crafted payload cost more to reject (Fastify's advice).
  allErrors: false,
  addUsedSchema: false,
  // TypeBox annotations (e.g. descriptions for OpenAPI) are not validation keywords.
  strict: false,
  // Errors carry the failing schema, so the answer can use its `errorMessage`.
  verbose: true,
};

/**
 * Request validation with two rule sets. Path and query parameters arrive as
 * text, so they are coerced to the schema's types (`?limit=10` → 10). JSON
 * bodies are not: a client that sends `{"user_id": "3"}` or `{"content": 42}`
 * sent the wrong type, and hearing so beats a silent conversion.
 */
export function installValidation(app: FastifyInstance): void {
  const forBodies = addFormats(new Ajv({ ...common, coerceTypes: false }));
  const forText = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
  app.setValidatorCompiler<FastifySchema>(({ schema, httpPart }) =>
    (httpPart === 'body' ? forBodies : forText).compile(schema as object),
  );
  // A route that validates any part of the request can answer 400: its OpenAPI entry says so.
  app.addHook('onRoute', (route) => {
    const schema = route.schema;
    if (schema?.params !== undefined || schema?.querystring !== undefined || schema?.body !== undefined) {
      declareErrorStatuses(route, [400]);
    }
  });
}
