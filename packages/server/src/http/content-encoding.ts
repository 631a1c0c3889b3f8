import type { FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';

/**
 * Request bodies are read as sent: a compressed body (`Content-Encoding:
 * gzip`) is answered 415 saying so, rather than 400 "not valid JSON", and a
 * plain body labelled compressed is not taken as plain. Alertmanager and the
 * clients send bodies uncompressed. Checked after authentication (a
 * `preParsing` hook), so an unauthenticated request learns nothing from it.
 */
export function installIdentityBodiesOnly(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    const hasBody =
      request.headers['transfer-encoding'] !== undefined ||
      Number(request.headers['content-length'] ?? 0) > 0;
    if (!hasBody) return payload;
    const encoding = request.headers['content-encoding']?.trim().toLowerCase();
    if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
      throw new ApiError(
        415,
        `Content-Encoding "${encoding.slice(0, 40)}" is not supported; send the body uncompressed`,
      );
    }
    return payload;
  });
}
