/**
 * A real Alertmanager for tests, built by `tools/build-peers.sh`, whose only
 * receiver is a webhook pointing at the terdut-server under test.
 *
 * @example
 *   const am = await startAlertmanager({ webhookUrl: `${server}/api/webhook/alertmanager`, apiKey });
 *   await am.postAlerts([{ labels: { alertname: 'DiskFull', severity: 'page' } }]);
 *   await am.stop();
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChildProcessGroup,
  freeLoopbackPort,
  peerBinary,
  retryOnPortConflict,
  waitUntil,
} from './child-processes.ts';

/** An alert as Alertmanager's `POST /api/v2/alerts` takes it (what Prometheus sends). */
export interface PostableAlert {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
  /** RFC 3339; Alertmanager uses "now" when absent. */
  startsAt?: string;
  /** RFC 3339; an `endsAt` in the past resolves the alert. */
  endsAt?: string;
  generatorURL?: string;
}

export interface StartAlertmanagerOptions {
  /** Where the webhook receiver delivers, e.g. `http://127.0.0.1:4000/api/webhook/alertmanager`. */
  webhookUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` (http_config.authorization). */
  apiKey: string;
  /** Labels that form a notification group (route.group_by); default `['alertname']`. */
  groupBy?: string[];
  /** Kept short so tests see notifications within seconds. */
  groupWait?: string;
  groupInterval?: string;
  repeatInterval?: string;
  /** How long an alert posted without `endsAt` stays firing (global.resolve_timeout). */
  resolveTimeout?: string;
  /** webhook_config.max_alerts: the alerts a notification lists at most (0, the default: all). */
  maxAlerts?: number;
}

export interface RunningAlertmanager {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** The generated alertmanager.yml. */
  configPath: string;
  logPath: string;
  pid: number;
  /** Posts alerts to `/api/v2/alerts`; throws with Alertmanager's answer unless it accepts them. */
  postAlerts(alerts: PostableAlert[]): Promise<void>;
  /** Alertmanager's current view of the alerts (`GET /api/v2/alerts`). */
  alerts(): Promise<unknown[]>;
  stop(): Promise<void>;
}

/** The configuration `startAlertmanager` writes, exported for tests of the receiver's contract. */
export function alertmanagerConfig(options: StartAlertmanagerOptions): string {
  // JSON is valid YAML; it spares a YAML dependency and quoting mistakes.
  return JSON.stringify(
    {
      global: { resolve_timeout: options.resolveTimeout ?? '5m' },
      route: {
        receiver: 'terdut',
        group_by: options.groupBy ?? ['alertname'],
        group_wait: options.groupWait ?? '1s',
        group_interval: options.groupInterval ?? '1s',
        repeat_interval: options.repeatInterval ?? '1m',
      },
      receivers: [
        {
          name: 'terdut',
          webhook_configs: [
            {
              url: options.webhookUrl,
              send_resolved: true,
              ...(options.maxAlerts !== undefined ? { max_alerts: options.maxAlerts } : {}),
              http_config: { authorization: { type: 'Bearer', credentials: options.apiKey } },
            },
          ],
        },
      ],
    },
    null,
    2,
  );
}

/**
 * Starts Alertmanager on a free loopback port with clustering disabled and a
 * temp storage dir; resolves once `/-/ready` answers 200. It is stopped by
 * `stop()`, or by the watchdog if this process dies first.
 */
export async function startAlertmanager(options: StartAlertmanagerOptions): Promise<RunningAlertmanager> {
  return startAlertmanagerWithConfig(alertmanagerConfig(options));
}

/** The same, with an alertmanager.yml of the caller's (a documented example, as a user would copy it). */
export async function startAlertmanagerWithConfig(config: string): Promise<RunningAlertmanager> {
  return retryOnPortConflict(() => startAlertmanagerOnce(config));
}

async function startAlertmanagerOnce(config: string): Promise<RunningAlertmanager> {
  const binary = peerBinary('alertmanager');
  const dir = mkdtempSync(join(tmpdir(), 'terdut-alertmanager-'));
  const configPath = join(dir, 'alertmanager.yml');
  writeFileSync(configPath, config);
  const port = await freeLoopbackPort();
  const url = `http://127.0.0.1:${port}`;
  const group = new ChildProcessGroup();
  const child = group.spawn({
    name: 'alertmanager',
    command: binary,
    logPath: join(dir, 'alertmanager.log'),
    args: [
      `--config.file=${configPath}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // An empty address turns gossip clustering off: each test instance is
      // alone, like a second "replica" that does not deduplicate with the first.
      '--cluster.listen-address=',
    ],
  });
  const stop = async (): Promise<void> => {
    await group.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(async () => (await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) })).ok, {
      timeoutMs: 30_000,
      child,
      describe: () => `Alertmanager did not become ready at ${url}/-/ready (log: ${child.logPath})`,
    });
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    url,
    configPath,
    logPath: child.logPath,
    pid: child.process.pid ?? 0,
    stop,
    async postAlerts(alerts) {
      const res = await fetch(`${url}/api/v2/alerts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(alerts),
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) throw new Error(`Alertmanager refused the alerts with ${res.status}: ${await res.text()}`);
    },
    async alerts() {
      const res = await fetch(`${url}/api/v2/alerts`, { signal: AbortSignal.timeout(10_000) });
      if (!res.ok) throw new Error(`GET ${url}/api/v2/alerts answered ${res.status}: ${await res.text()}`);
      return (await res.json()) as unknown[];
    },
  };
}
