#!/usr/bin/env node
/**
 * terdut-server command line: `serve` (default), `migrate`, `admin recover`, `--help`, `--version`.
 * Wiring only: configuration, database, app, signals.
 */
import { constants } from 'node:os';
import { pino } from 'pino';
import { loadConfig, ConfigError, type Config } from './config.ts';
import { openConfiguredDatabase } from './db/open.ts';
import { migrate } from './db/migrate.ts';
import { embeddedDatabaseJobs } from './db/embedded-maintenance.ts';
import { buildApp, LOG_OPTIONS } from './app.ts';
import { startBackgroundJobs } from './background-jobs.ts';
import { incidentBackgroundJobs } from './services/incident-jobs.ts';
import { pagingBackgroundJobs } from './services/paging/jobs.ts';
import { isBootstrapped } from './services/bootstrap.ts';
import { adminRecover, ADMIN_RECOVER_HELP, ADMIN_RECOVER_USAGE } from './cli/admin-recover.ts';
import { bootstrapInstructions } from './cli/bootstrap-instructions.ts';
import { bootstrapTokenSource, BootstrapTokenUnavailable } from './auth/bootstrap-token.ts';
import { VERSION } from './version.ts';

const HELP = `terdut-server ${VERSION}: on-call and incident manager for Prometheus teams

Usage:
  terdut-server [serve]      run the HTTP server (applies pending migrations first)
  terdut-server migrate      apply pending database migrations and exit
  terdut-server admin recover --username NAME [--email ADDRESS]
                             make NAME an admin (creating or restoring it) and print a new API key once;
                             run where the server runs, with the same DATABASE_URL / TERDUT_DATA_DIR
                             (terdut-server admin recover --help for more)
  terdut-server --help       show this help
  terdut-server --version    print the version

Configuration is read from the environment; see the README's configuration table.
Without DATABASE_URL the server uses an embedded PostgreSQL in TERDUT_DATA_DIR (default ./.terdut).
`;

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return 0;
  }
  if (command === '--version' || command === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  // `serve` and `migrate` take no arguments: one they ignored (`migrate --help`)
  // would run the command against the configured database instead.
  if ((command === 'serve' || command === 'migrate') && rest.length > 0) {
    if (rest.includes('--help') || rest.includes('-h')) {
      process.stdout.write(HELP);
      return 0;
    }
    process.stderr.write(
      `terdut-server: ${command} takes no arguments, got "${rest.join(' ')}"; ` +
        'settings come from the environment (see terdut-server --help)\n',
    );
    return 2;
  }
  // Help and usage before the configuration: `admin recover --help` must not
  // need a valid environment, nor open the database.
  if (command === 'admin') {
    const [subcommand, ...options] = rest;
    if (subcommand === '--help' || subcommand === '-h' || subcommand === 'help') {
      process.stdout.write(`Usage: ${ADMIN_RECOVER_USAGE}\n(terdut-server admin recover --help for more)\n`);
      return 0;
    }
    if (subcommand !== 'recover') {
      process.stderr.write(`terdut-server: unknown admin command; usage: ${ADMIN_RECOVER_USAGE}\n`);
      return 2;
    }
    if (options.includes('--help') || options.includes('-h')) {
      process.stdout.write(ADMIN_RECOVER_HELP);
      return 0;
    }
  }
  stopAtOnceUntilServing();
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`terdut-server: configuration error: ${error.message}\n`);
      return 2;
    }
    throw error;
  }
  switch (command) {
    case 'serve':
      return serve(config);
    case 'migrate':
      return runMigrations(config);
    case 'admin':
      return adminRecover(rest.slice(1), config, process);
    default:
      process.stderr.write(
        `terdut-server: unknown command "${[command, ...rest].join(' ')}"; see terdut-server --help\n`,
      );
      return 2;
  }
}

async function runMigrations(config: Config): Promise<number> {
  const { db, description, warnings } = await openConfiguredDatabase(config);
  for (const warning of warnings) process.stderr.write(`warning: ${warning}\n`);
  try {
    const applied = await migrate(db);
    process.stdout.write(
      `${description}: applied ${applied.length} migration(s)${applied.length ? ': ' + applied.join(', ') : ''}\n`,
    );
    return 0;
  } finally {
    await db.close();
  }
}

async function serve(config: Config): Promise<number> {
  // Asynchronous writes: a synchronous write per request line was a tenth of
  // the CPU a small notification costs. Lines are not held back (no minimum
  // length), and pino flushes what is pending when the process exits.
  const logger = pino({ level: config.logLevel, ...LOG_OPTIONS }, pino.destination({ dest: 1, sync: false }));
  const { db, description, warnings } = await openConfiguredDatabase(config);
  for (const warning of warnings) logger.warn(warning);
  const applied = await migrate(db);
  logger.info({ database: description, applied_migrations: applied }, 'database ready');
  const app = await buildApp({ db, config, logger, processMetrics: true, wakePaging: true });
  // Staleness sweep, retention prune, paging, heartbeats and handoff notices; safe on every replica
  // (they claim work in the database). On the embedded database, also what autovacuum would do.
  const jobs = startBackgroundJobs(
    [
      ...incidentBackgroundJobs(app.services),
      ...pagingBackgroundJobs(app.services, config.paging),
      ...embeddedDatabaseJobs(db),
    ],
    logger,
  );
  if (config.publicUrl === undefined) {
    logger.warn(
      'TERDUT_PUBLIC_URL is not set: pages carry no link to the incident and no Acknowledge action; set it to the URL people open terdut at',
    );
  }

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing requests in flight');
    // Fastify's close stops accepting, waits for in-flight requests and runs onClose hooks.
    const timer = setTimeout(() => {
      logger.error('shutdown took longer than 25s; exiting anyway');
      process.exit(1);
    }, 25_000);
    timer.unref();
    try {
      await app.close();
      await jobs.stop();
      await app.services.paging.settle();
      await db.close();
    } finally {
      clearTimeout(timer);
    }
  };
  process.off('SIGTERM', stopAtOnce);
  process.off('SIGINT', stopAtOnce);
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  let address: string;
  try {
    address = await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    // The background jobs and the open database would keep the process
    // alive, serving nothing, for good: close them so it exits and restarts.
    await app.close();
    await jobs.stop();
    await app.services.paging.settle();
    await db.close();
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new Error(
      `cannot listen on ${config.host}:${config.port} (${reason}); check HOST and PORT, ` +
        'and that no other process listens there',
      { cause: error },
    );
  }
  const shown = address.replace('0.0.0.0', 'localhost').replace('[::]', 'localhost');
  logger.info({ url: shown }, `terdut-server ${VERSION} listening on ${shown}`);
  if (!(await isBootstrapped(db))) {
    // The one place a secret may be printed (bootstrap-protocol.md): a token
    // generated just now, for a person installing by hand. Plain text on
    // stderr so the curl line can be pasted; the JSON log only points at it.
    const baseUrl = config.publicUrl ?? shown;
    process.stderr.write(bootstrapInstructions(baseUrl, app.services.bootstrap.tokenSource));
    logger.warn(
      {
        bootstrap_url: `${baseUrl.replace(/\/$/, '')}/api/bootstrap`,
        token_source: app.services.bootstrap.tokenSource.origin,
      },
      'not bootstrapped yet: POST /api/bootstrap with the bootstrap token (instructions printed on stderr)',
    );
    // Not a start-up error: the file is re-read at every use, and a mounted
    // Secret may appear after the pod starts. But whoever pastes the curl
    // line now would get a 503, so say why here, where they look first.
    // (A source of its own: the service shows where its token comes from, never the token.)
    if (config.bootstrapTokenFile !== undefined) {
      const unreadable = await bootstrapTokenSource(config)
        .current()
        .then(
          () => undefined,
          (error: unknown) => (error instanceof BootstrapTokenUnavailable ? error.message : undefined),
        );
      if (unreadable !== undefined) {
        logger.warn(`${unreadable}; POST /api/bootstrap answers 503 until it can be read`);
      }
    }
  }
  return new Promise<number>((resolve) => app.server.once('close', () => resolve(0)));
}

/**
 * Ends the process at once on SIGTERM or SIGINT until `serve` sets the handlers
 * that drain it (after the database is open and migrated). Node running as a
 * container's PID 1 has no default action for these signals, so a pod deleted
 * while the server waited for its database or ran its migrations ignored the
 * signal and was killed only at the end of its grace period (30 s by default).
 * Ending there loses nothing: each migration is one transaction, rolled back
 * with its connection, and the embedded database recovers from a kill at any
 * point.
 */
function stopAtOnce(signal: NodeJS.Signals): void {
  process.stderr.write(`terdut-server: ${signal} before the server was serving; stopping now\n`);
  process.exit(128 + constants.signals[signal]);
}

function stopAtOnceUntilServing(): void {
  process.once('SIGTERM', stopAtOnce);
  process.once('SIGINT', stopAtOnce);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`terdut-server: ${(error as Error).message}\n`);
    process.exitCode = 1;
  },
);
