import type { FastifyInstance } from 'fastify';
import { ApiError, badRequest } from '../errors.ts';

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
  app.addHook('preValidation', async (request) => {
    const schema = request.routeOptions.schema?.params as
      { properties?: Record<string, { 'x-terdut-id'?: boolean }> } | undefined;
    if (schema?.properties === undefined) return;
    const params = request.params as Record<string, string | undefined>;
    for (const [name, property] of Object.entries(schema.properties)) {
      if (property['x-terdut-id'] !== true) continue;
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
