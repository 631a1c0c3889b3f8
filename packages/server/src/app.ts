import { randomUUID } from 'node:crypto';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import swagger from '@fastify/swagger';
import cookie from '@fastify/cookie';
import type { Database } from './db/database.ts';
import type { Config } from './config.ts';
import { systemClock, type Clock } from './clock.ts';
import { createMetrics, type Metrics } from './metrics.ts';
import { createServices, type Services } from './services/index.ts';
import type { AuthenticationService } from './services/authentication.ts';
import { API_KEY_CACHE_MS } from './services/api-key-cache.ts';
import { installErrorHandling } from './http/errors.ts';
import { installJsonBodies } from './http/json-bodies.ts';
import { installIdentityBodiesOnly } from './http/content-encoding.ts';
import { installValidation } from './http/validation.ts';
import { installIdParamCheck } from './http/ids.ts';
import { installTextSafety } from './http/text-safety.ts';
import { loggedRequest } from './http/logged-request.ts';
import { installAuthentication } from './http/authentication.ts';
import { installCsrfProtection } from './http/csrf.ts';
import { installSecurityHeaders, setSecurityHeaders } from './http/security-headers.ts';
import { access } from './http/route-auth.ts';
import { openApiOptions } from './openapi/options.ts';
import { signInRoutes } from './routes/auth/index.ts';
import { healthRoutes } from './routes/health/index.ts';
import { userRoutes } from './routes/users/index.ts';
import { apiKeyRoutes } from './routes/api-keys/index.ts';
import { serviceAccountRoutes } from './routes/service-accounts/index.ts';
import { bootstrapRoutes } from './routes/bootstrap/index.ts';
import { auditRoutes } from './routes/audit/index.ts';
import { scheduleRoutes } from './routes/schedule/index.ts';
import { schedulesRoutes } from './routes/schedules/index.ts';
import { statsRoutes } from './routes/stats/index.ts';
import { webhookRoutes } from './routes/webhook/index.ts';
import { alertRoutes } from './routes/alerts/index.ts';
import { incidentRoutes } from './routes/incidents/index.ts';
import { VERSION } from './version.ts';
import { serverInfoRoutes } from './routes/server-info/index.ts';
import { eventRoutes, installChangeAnnouncements } from './routes/events/index.ts';
import { ChangeFeed } from './routes/events/change-feed.ts';
import { webAppRoutes } from './routes/web/index.ts';
import { BootstrapGate } from './services/bootstrap-gate.ts';
import { escalationPolicyRoutes } from './routes/escalation-policies/index.ts';
import { contactMethodRoutes } from './routes/contact-methods/index.ts';
import { pagingRoutes } from './routes/paging/index.ts';
import { acknowledgePageRoutes } from './routes/paging/confirm.ts';
import { maintenanceWindowRoutes } from './routes/maintenance-windows/index.ts';
import { heartbeatRoutes } from './routes/heartbeats/index.ts';

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
    metrics: Metrics;
  }
}

export interface AppOptions {
  db: Database;
  config: Config;
  clock?: Clock;
  /** A pino logger for request logs; none in tests and benchmarks. */
  logger?: FastifyBaseLogger;
  /** Node process metrics (CPU, memory, event loop) on /metrics; off for in-process test apps. */
  processMetrics?: boolean;
  /** The built web app (default packages/web/dist). */
  webDir?: string;
  /** Page right after an incident opens instead of at the next poll (main.ts); tests drive passes themselves. */
  wakePaging?: boolean;
}

/** Pino redaction: credentials never reach the log. */
export const LOG_REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-csrf-token"]',
  'res.headers["set-cookie"]',
];

/** The pino options of the server's log (main.ts): redaction, and requests without the credentials in their URLs. */
export const LOG_OPTIONS = {
  redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
  serializers: { req: loggedRequest },
};

/**
 * One log line per request, written when it completes (request, status,
 * response time), instead of Fastify's two (one on arrival, one on
 * completion). A log line is a synchronous write(2) to stdout; on a queue
 * refresh (about 2 ms of CPU) the arrival line cost about 5 % of the request
 * (`--cpu-prof`, bench/README.md) and says nothing the completion line does
 * not. A request still in flight is therefore not in the log yet.
 */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (this.isLogDisabled(request)) return;
    if (error) {
      reply.log.error(
        { req: request, res: reply, err: error, responseTime: reply.elapsedTime },
        'request errored',
      );
    } else {
      reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, 'request completed');
    }
  }
}

/**
 * Revoked API keys, deleted people and changed roles reach every replica's
 * remembered keys through the database's notifications. Listening starts
 * before any route exists, so no key is remembered before this replica can
 * hear of its revocation. Failing to listen does not stop the server:
 * remembered keys still expire after API_KEY_CACHE_MS, so revocation takes
 * that long at most instead of taking effect at once.
 */
async function listenForCredentialChanges(
  app: FastifyInstance,
  authentication: AuthenticationService,
): Promise<void> {
  try {
    await authentication.listenForCredentialChanges();
  } catch (error) {
    app.log.warn(
      { err: error },
      `not listening for credential changes (${(error as Error).message}): a revoked API key, a deleted person or a changed role takes effect on this replica within ${API_KEY_CACHE_MS / 1000} s instead of at once; check that the database accepts one more connection, and restart`,
    );
  }
  app.addHook('onClose', () => authentication.stopListening());
}

/**
 * Assembles the server: plugins, services and every route; does not listen.
 * `main.ts` listens; tests call `app.inject`.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const clock = options.clock ?? systemClock;
  const metrics = createMetrics(options.db, { processMetrics: options.processMetrics ?? false });
  const app = Fastify({
    ...(options.logger
      ? { loggerInstance: options.logger, logController: new OneLinePerRequest() }
      : { logger: false }),
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && /^[\w.-]{1,128}$/.test(given) ? given : randomUUID();
    },
    // Alertmanager sends its whole group state in one notification.
    bodyLimit: 8 * 1024 * 1024,
    // Node's own default, which Fastify turns off: a request (its body
    // included) must have arrived within 5 minutes, so a client trickling a
    // body it was refused (401) or that waits its turn cannot hold a
    // connection for ever. Large webhook bodies have 30 s once let in (http/body-budget.ts).
    requestTimeout: 300_000,
    // A path Fastify cannot decode (`%FF`, an unpaired surrogate) is answered
    // before any hook runs: in our error shape, with our headers, without
    // echoing the path.
    frameworkErrors: (error, _request, frameworkReply) => {
      const reply = frameworkReply as unknown as FastifyReply;
      setSecurityHeaders(reply);
      const badUrl = error.code === 'FST_ERR_BAD_URL';
      void reply.code(400).send({
        error: badUrl
          ? 'the request path is not valid percent-encoded UTF-8'
          : 'the request could not be routed; check its path and headers',
      });
    },
    // request.ip (rate limits, audit) is the real client only when the proxy in front is trusted.
    trustProxy: options.config.trustedProxies.length > 0 ? options.config.trustedProxies : false,
  });
  const services = createServices({
    db: options.db,
    clock,
    config: options.config,
    metrics,
    wakePaging: options.wakePaging ?? false,
  });
  const bootstrapGate = new BootstrapGate({ db: options.db });
  await listenForCredentialChanges(app, services.authentication);
  app.decorate('services', services);
  app.decorate('metrics', metrics);

  installErrorHandling(app);
  installJsonBodies(app);
  installIdentityBodiesOnly(app);
  installValidation(app);
  installIdParamCheck(app);
  installTextSafety(app);
  // Cookies are parsed before authentication looks for the session cookie.
  await app.register(cookie);
  installSecurityHeaders(app);
  installAuthentication(app, {
    authentication: services.authentication,
    bootstrap: services.bootstrap,
    capabilities: services.capabilities,
    metricsToken: options.config.metricsToken,
  });
  installCsrfProtection(app, { publicUrl: options.config.publicUrl });
  const changes = new ChangeFeed(options.db);
  installChangeAnnouncements(app, changes);
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.httpRequestDuration
      .labels(request.method, route, String(reply.statusCode))
      .observe(reply.elapsedTime / 1000);
  });

  await app.register(swagger, openApiOptions(VERSION));

  await app.register(healthRoutes({ db: options.db, metrics }));
  await app.register(userRoutes(services.users));
  await app.register(
    signInRoutes({
      signIn: services.signIn,
      oidc: services.oidcSignIn,
      passwords: services.passwords,
      publicUrl: options.config.publicUrl,
    }),
  );
  await app.register(apiKeyRoutes(services.apiKeys));
  await app.register(serviceAccountRoutes(services.serviceAccounts));
  await app.register(bootstrapRoutes(services.bootstrap));
  await app.register(auditRoutes(services.audit));
  await app.register(scheduleRoutes(services.schedule));
  await app.register(schedulesRoutes(services.schedules));
  await app.register(statsRoutes(services.statistics));
  await app.register(webhookRoutes(services.intake, metrics, clock));
  await app.register(alertRoutes(services.alerts));
  await app.register(incidentRoutes(services.incidents));
  await app.register(
    serverInfoRoutes({ config: options.config, isBootstrapped: () => bootstrapGate.isBootstrapped() }),
  );
  await app.register(eventRoutes(changes));
  await app.register(webAppRoutes({ dir: options.webDir }));
  await app.register(escalationPolicyRoutes(services.escalationPolicies));
  await app.register(contactMethodRoutes(services.contactMethods));
  await app.register(pagingRoutes(services.paging));
  await app.register(acknowledgePageRoutes(services.paging));
  await app.register(maintenanceWindowRoutes(services.maintenanceWindows));
  await app.register(heartbeatRoutes(services.heartbeats));
  app.get('/api/openapi.json', { schema: { hide: true }, config: { auth: access.public } }, async () =>
    app.swagger(),
  );

  return app;
}
