import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.ts';
import type { Metrics } from '../../metrics.ts';
import { migrationsApplied } from '../../db/migrate.ts';
import { VERSION } from '../../version.ts';

/** `/healthz` (with the version), `/readyz` and `/metrics`: public, outside `/api`, hidden from the OpenAPI document. */
export function healthRoutes(deps: { db: Database; metrics: Metrics }) {
  return async (app: FastifyInstance): Promise<void> => {
    const hide = { hide: true };
    app.get('/healthz', { schema: hide, config: { public: true } }, async () => ({
      status: 'ok',
      version: VERSION,
    }));
    app.get('/readyz', { schema: hide, config: { public: true } }, async (_request, reply) => {
      try {
        await deps.db.query('SELECT 1');
      } catch (error) {
        return reply.status(503).send({ error: `database does not answer: ${(error as Error).message}` });
      }
      if (!(await migrationsApplied(deps.db))) {
        return reply.status(503).send({ error: 'database migrations are not applied yet' });
      }
      return { status: 'ready' };
    });
    app.get('/metrics', { schema: hide, config: { public: true } }, async (_request, reply) => {
      return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
    });
  };
}
