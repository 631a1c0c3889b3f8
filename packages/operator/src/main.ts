#!/usr/bin/env node
/**
 * terdut-operator entry point: configuration, logging, signals. Wiring only;
 * operator.ts assembles the parts.
 */
import { loadOperatorConfig, OperatorConfigError, usage } from './config.ts';
import { startOperator } from './operator.ts';
import { KubeClient } from './runtime/kube-client.ts';
import { jsonLogger } from './runtime/logger.ts';
import { VERSION } from './version.ts';

async function main(argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(usage);
    return 0;
  }
  if (argv.includes('--version')) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  let config;
  try {
    config = loadOperatorConfig(argv);
  } catch (error) {
    if (
      error instanceof OperatorConfigError ||
      (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')
    ) {
      process.stderr.write(`terdut-operator: ${(error as Error).message}\n\n${usage}`);
      return 2;
    }
    throw error;
  }
  const logger = jsonLogger(config.logLevel);
  // Signals are handled from the start: one that arrives while the operator
  // is still starting (informers listing, lease pending) stops it once started.
  let signalled: string | undefined;
  let onSignal: (signal: string) => void = (signal) => {
    signalled = signal;
  };
  process.once('SIGTERM', () => onSignal('SIGTERM'));
  process.once('SIGINT', () => onSignal('SIGINT'));

  const kube = KubeClient.load(config.kubeconfig);
  const operator = await startOperator({
    config,
    kube,
    logger,
    processMetrics: true,
    // Another replica may already act: stop at once, the Deployment restarts us as a standby.
    onLeadershipLost: () => process.exit(1),
  });
  logger.info('terdut-operator started', {
    version: VERSION,
    identity: operator.identity,
    probes: operator.probeUrl,
    metrics: operator.metricsUrl,
    operatorNamespace: config.operatorNamespace,
    watchNamespaces: config.watchNamespaces.length ? config.watchNamespaces : 'all',
  });
  return new Promise<number>((resolve) => {
    onSignal = (signal: string) => {
      logger.info('shutting down: finishing reconciles in flight, releasing the lease', { signal });
      const timer = setTimeout(() => {
        logger.error('shutdown took longer than 25 s; exiting anyway');
        resolve(1);
      }, 25_000);
      timer.unref();
      operator.stop().then(
        () => resolve(0),
        (error: unknown) => {
          logger.error('shutdown failed', { error: (error as Error).message });
          resolve(1);
        },
      );
    };
    if (signalled) onSignal(signalled);
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`terdut-operator: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
