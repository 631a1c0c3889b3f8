import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import type { Config } from '../../config.ts';
import { access } from '../../http/route-auth.ts';
import { VERSION } from '../../version.ts';

export interface ServerInfo {
  version: string;
  /** TERDUT_TIMEZONE: calendar days (schedule) and statistics hours are in this zone. */
  time_zone: string;
  /** Whether "Sign in with SSO" (/auth/oidc/login) is available. */
  oidc: boolean;
  /** false until the first admin exists (bootstrap-protocol.md). */
  bootstrapped: boolean;
}

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
            200: Type.Object({
              version: Type.String(),
              time_zone: Type.String(),
              oidc: Type.Boolean(),
              bootstrapped: Type.Boolean(),
            }),
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
