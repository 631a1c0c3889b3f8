import type { FastifyInstance } from 'fastify';
import { ApiError, badRequest } from '../errors.ts';
import { declareErrorStatuses } from './route-auth.ts';

/** The names of the path parameters a params schema declares with the contract's `Id`. */
function idParamsOf(params: unknown): string[] {
  const properties = (params as { properties?: Record<string, { 'x-terdut-id'?: boolean }> } | undefined)
    ?.properties;
  return Object.entries(properties ?? {})
    .filter(([, property]) => property['x-terdut-id'] === true)
    .map(([name]) => name);
}

/**
 * Path parameters declared with the contract's `Id` schema (`@terdut/contract`,
 * marked `x-terdut-id`) arrive as text. Coercion alone would take `0x10`,
 * ` 1`, `1e3` and `1.0` as ids and hand `1e400` or 2^64 to the database; the
 * preValidation check below admits decimal digits only: anything else is 400
 * naming the parameter, and a well-formed id beyond 2^53−1 is 404 (no such
 * row can exist).
 *
 * Checks the text of every such path parameter before validation coerces it.
 */
export function installIdParamCheck(app: FastifyInstance): void {
  // Both answers are the route's own, so its OpenAPI entry lists them.
  app.addHook('onRoute', (route) => {
    if (idParamsOf(route.schema?.params).length > 0) declareErrorStatuses(route, [400, 404]);
  });
  app.addHook('preValidation', async (request) => {
    const params = request.params as Record<string, string | undefined>;
    for (const name of idParamsOf(request.routeOptions.schema?.params)) {
      const text = params[name];
      if (text === undefined) continue;
      if (!/^[1-9][0-9]*$/.test(text)) {
        throw badRequest(
          `path field "${name}" must be an id: decimal digits from 1 to ${Number.MAX_SAFE_INTEGER}`,
        );
      }
      if (text.length >= 16 && BigInt(text) > BigInt(Number.MAX_SAFE_INTEGER)) {
        throw new ApiError(404, `no object has ${name} ${text.slice(0, 40)}`);
      }
    }
  });
}
