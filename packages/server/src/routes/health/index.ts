import type { FastifyInstance } from 'fastify';
import type { Database } from '../../db/database.ts';
import type { Metrics } from '../../metrics.ts';
import { migrationsApplied } from '../../db/migrate.ts';
import { access } from '../../http/route-auth.ts';
import { VERSION } from '../../version.ts';

/**
 * How long /readyz waits for the database. Below the operator's probe
 * timeout (2 s), so a frozen database reads as "not ready" (503), not as a
 * probe that timed out.
 */
export const READY_DEADLINE_MS = 1_500;

/** `/healthz` (with the version), `/readyz` and `/metrics`: outside `/api`, hidden from the OpenAPI document. */
export function healthRoutes(deps: { db: Database; metrics: Metrics }) {
  return async (app: FastifyInstance): Promise<void> => {
    const hide = { hide: true };
    // Liveness is the process and its event loop, nothing else: it never
    // touches the database (its route declares no credentials to resolve).
    app.get('/healthz', { schema: hide, config: { auth: access.public } }, async () => ({
      status: 'ok',
      version: VERSION,
    }));
    app.get('/readyz', { schema: hide, config: { auth: access.public } }, async (request, reply) => {
      const verdict = await withDeadline(readiness(deps.db), READY_DEADLINE_MS);
      if (verdict === 'timeout') {
        return reply.status(503).send({
          error: `database did not answer within ${READY_DEADLINE_MS} ms; check that it is running`,
        });
      }
      if (verdict instanceof Error) {
        // Anyone may ask /readyz; the driver's message names the database's
        // host, port, database and user, so it goes to the log only.
        request.log.warn({ err: { message: verdict.message } }, 'readiness: database does not answer');
        return reply.status(503).send({
          error:
            'database does not answer (the server log says why); check that it is running and DATABASE_URL',
        });
      }
      if (verdict !== 'ready') return reply.status(503).send({ error: verdict });
      return { status: 'ready' };
    });
    app.get('/metrics', { schema: hide, config: { auth: access.metricsToken } }, async (_request, reply) => {
      return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
    });
  };
}

async function readiness(db: Database): Promise<string | Error> {
  try {
    await db.query('SELECT 1');
  } catch (error) {
    return error as Error;
  }
  return (await migrationsApplied(db)) ? 'ready' : 'database migrations are not applied yet';
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
  });
  // A late failure of the abandoned check must not become an unhandled rejection.
  work.catch(() => {});
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
