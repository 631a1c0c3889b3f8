/**
 * terdut-operator's configuration: command-line flags, each with an
 * environment variable fallback (flags win). Parsed once in main.ts.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_SERVER_IMAGE, VERSION } from './version.ts';

export interface OperatorConfig {
  /** Where the operator keeps its own Secrets (credentials, checkpoints) and its Lease. */
  operatorNamespace: string;
  /** Namespaces whose TerdutServers this operator manages; empty = all. */
  watchNamespaces: string[];
  defaultImage: string;
  concurrency: number;
  metricsAddress: string;
  probeAddress: string;
  /** Unset: in-cluster config, else $KUBECONFIG / ~/.kube/config. */
  kubeconfig: string | undefined;
  leaderElection: boolean;
  leaseName: string;
  /** `namespace/service=http://host:port` lines; for running outside the cluster (no Service DNS). */
  serverUrlOverridesFile: string | undefined;
  /** How long to wait for a pod to pick up a rotated bootstrap token before BootstrapStateLost. */
  tokenPickupTimeoutMs: number;
  /** How often the recorded key of each settled TerdutServer is checked between passes. */
  keyCheckIntervalMs: number;
  /** How long a deletion retries revoking the operator's keys before it finishes anyway. */
  finalizeTimeoutMs: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
}

export class OperatorConfigError extends Error {}

const defaults = {
  'operator-namespace': 'terdut-system',
  'default-image': DEFAULT_SERVER_IMAGE,
  concurrency: '4',
  'metrics-address': ':8080',
  'probe-address': ':8081',
  'lease-name': 'terdut-operator',
  'token-pickup-timeout': '180',
  'key-check-interval': '300',
  'finalize-timeout': '120',
  'log-level': 'info',
};

export const usage = `terdut-operator ${VERSION}: runs and bootstraps terdut-server on Kubernetes

Usage: terdut-operator [flags]   (--help: this text, --version: the version)

Flags (environment variable in brackets; flags win):
  --operator-namespace NS      its own Secrets and Lease live here [POD_NAMESPACE, TERDUT_OPERATOR_NAMESPACE] (${defaults['operator-namespace']})
  --watch-namespaces A,B       manage TerdutServers only there [TERDUT_OPERATOR_WATCH_NAMESPACES] (all)
  --default-image IMAGE        terdut-server image when spec.image is unset [TERDUT_OPERATOR_DEFAULT_IMAGE] (${defaults['default-image']})
  --concurrency N              reconciles running at once [TERDUT_OPERATOR_CONCURRENCY] (${defaults.concurrency})
  --metrics-address ADDR       /metrics listen address [TERDUT_OPERATOR_METRICS_ADDRESS] (${defaults['metrics-address']})
  --probe-address ADDR         /healthz and /readyz listen address [TERDUT_OPERATOR_PROBE_ADDRESS] (${defaults['probe-address']})
  --kubeconfig PATH            out-of-cluster kubeconfig [KUBECONFIG] (in-cluster when running in a pod)
  --no-leader-election         run without the Lease (one replica only!) [TERDUT_OPERATOR_LEADER_ELECTION=false]
  --lease-name NAME            leader-election Lease [TERDUT_OPERATOR_LEASE_NAME] (${defaults['lease-name']})
  --server-url-overrides-file  lines "namespace/service=http://host:port", re-read on use, for running
                               outside the cluster [TERDUT_OPERATOR_SERVER_URL_OVERRIDES_FILE]
  --token-pickup-timeout SECS  wait this long for a pod to read a rotated bootstrap token
                               [TERDUT_OPERATOR_TOKEN_PICKUP_TIMEOUT] (${defaults['token-pickup-timeout']})
  --key-check-interval SECS    check each recorded key (GET /api/me) this often between passes
                               [TERDUT_OPERATOR_KEY_CHECK_INTERVAL] (${defaults['key-check-interval']})
  --finalize-timeout SECS      on deletion, retry revoking the operator's keys this long
                               [TERDUT_OPERATOR_FINALIZE_TIMEOUT] (${defaults['finalize-timeout']})
  --log-level LEVEL            debug, info, warn, error [LOG_LEVEL] (${defaults['log-level']})
`;

export function loadOperatorConfig(
  argv: string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
): OperatorConfig {
  const { values } = parseArgs({
    args: argv,
    options: {
      'operator-namespace': { type: 'string' },
      'watch-namespaces': { type: 'string' },
      'default-image': { type: 'string' },
      concurrency: { type: 'string' },
      'metrics-address': { type: 'string' },
      'probe-address': { type: 'string' },
      kubeconfig: { type: 'string' },
      'no-leader-election': { type: 'boolean' },
      'lease-name': { type: 'string' },
      'server-url-overrides-file': { type: 'string' },
      'token-pickup-timeout': { type: 'string' },
      'key-check-interval': { type: 'string' },
      'finalize-timeout': { type: 'string' },
      'log-level': { type: 'string' },
    },
    strict: true,
  });
  const pick = (
    flag: keyof typeof defaults | 'watch-namespaces' | 'kubeconfig' | 'server-url-overrides-file',
    ...vars: string[]
  ) => {
    const fromFlag = values[flag];
    if (typeof fromFlag === 'string' && fromFlag !== '') return fromFlag;
    for (const name of vars) if (env[name]) return env[name];
    return flag in defaults ? defaults[flag as keyof typeof defaults] : undefined;
  };
  const positive = (
    flag: 'concurrency' | 'token-pickup-timeout' | 'key-check-interval' | 'finalize-timeout',
    envName: string,
  ): number => {
    const raw = pick(flag, envName)!;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1)
      throw new OperatorConfigError(`--${flag} (${envName}) must be a whole number ≥ 1, got "${raw}"`);
    return value;
  };
  const logLevel = pick('log-level', 'LOG_LEVEL')!;
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel))
    throw new OperatorConfigError(`--log-level must be debug, info, warn or error, got "${logLevel}"`);
  return {
    operatorNamespace: pick('operator-namespace', 'TERDUT_OPERATOR_NAMESPACE', 'POD_NAMESPACE')!,
    watchNamespaces: (pick('watch-namespaces', 'TERDUT_OPERATOR_WATCH_NAMESPACES') ?? '')
      .split(',')
      .map((ns) => ns.trim())
      .filter(Boolean),
    defaultImage: pick('default-image', 'TERDUT_OPERATOR_DEFAULT_IMAGE')!,
    concurrency: positive('concurrency', 'TERDUT_OPERATOR_CONCURRENCY'),
    metricsAddress: pick('metrics-address', 'TERDUT_OPERATOR_METRICS_ADDRESS')!,
    probeAddress: pick('probe-address', 'TERDUT_OPERATOR_PROBE_ADDRESS')!,
    kubeconfig: pick('kubeconfig', 'KUBECONFIG'),
    leaderElection: !(values['no-leader-election'] ?? env.TERDUT_OPERATOR_LEADER_ELECTION === 'false'),
    leaseName: pick('lease-name', 'TERDUT_OPERATOR_LEASE_NAME')!,
    serverUrlOverridesFile: pick('server-url-overrides-file', 'TERDUT_OPERATOR_SERVER_URL_OVERRIDES_FILE'),
    tokenPickupTimeoutMs: positive('token-pickup-timeout', 'TERDUT_OPERATOR_TOKEN_PICKUP_TIMEOUT') * 1000,
    keyCheckIntervalMs: positive('key-check-interval', 'TERDUT_OPERATOR_KEY_CHECK_INTERVAL') * 1000,
    finalizeTimeoutMs: positive('finalize-timeout', 'TERDUT_OPERATOR_FINALIZE_TIMEOUT') * 1000,
    logLevel: logLevel as OperatorConfig['logLevel'],
  };
}
