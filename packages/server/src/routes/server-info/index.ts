import type { FastifyInstance } from 'fastify';
import { ServerInfoSchema, type ServerInfo } from '@terdut/contract';
import type { Config } from '../../config.ts';
import { access } from '../../http/route-auth.ts';
import { VERSION } from '../../version.ts';

/** `GET /api/server-info` (public): what the web app needs to know once, so it never guesses. */
export function serverInfoRoutes(deps: { config: Config; isBootstrapped: () => Promise<boolean> }) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get(
      '/api/server-info',
      {
        config: { auth: access.public },
        schema: {
          tags: ['server-info'],
          summary: 'Version, time zone, whether OIDC sign-in is on, whether bootstrapped (public)',
          security: [],
          response: {
            200: ServerInfoSchema,
          },
        },
      },
      async (): Promise<ServerInfo> => ({
        version: VERSION,
        time_zone: deps.config.timezone,
        oidc: deps.config.oidc !== undefined,
        bootstrapped: await deps.isBootstrapped(),
      }),
    );
  };
}
