/**
 * End to end: real Alertmanager -> real terdut-server processes -> real
 * PostgreSQL. Alerts posted to Alertmanager's own API reach terdut-server
 * through real webhook notifications, become one incident, and resolve when
 * Alertmanager resolves them. Two Alertmanagers without gossip (what an HA
 * pair looks like while its cluster link is down) each deliver the same group
 * to a different terdut-server replica sharing one database, and no duplicate
 * incident or alert appears.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { startAlertmanager, type RunningAlertmanager } from '../peers/alertmanager.ts';
import { ChildProcessGroup, freeLoopbackPort, repoRoot, waitUntil } from '../peers/child-processes.ts';
import { createTestPostgres } from '../support/databases.ts';

const bootstrapToken = 'e2e-bootstrap-token-0123456789abcdef0123456789abcdef';

interface ServerReplica {
  url: string;
  logPath: string;
}

interface Incident {
  id: number;
  group_key: string;
  status: string;
  resolution_source?: string;
  alerts?: { fingerprint: string; status: string; labels: Record<string, string> }[];
}

const processes = new ChildProcessGroup();
const dirs: string[] = [];
const alertmanagers: RunningAlertmanager[] = [];
let database: Awaited<ReturnType<typeof createTestPostgres>> | undefined;
let replicas: ServerReplica[] = [];
let apiKey: string;

/** One terdut-server process (`node packages/server/src/main.ts serve`) on a loopback port. */
async function startServerReplica(databaseUrl: string): Promise<ServerReplica> {
  const port = await freeLoopbackPort();
  const dir = mkdtempSync(join(tmpdir(), 'terdut-e2e-server-'));
  dirs.push(dir);
  const child = processes.spawn({
    name: `terdut-server :${port}`,
    command: process.execPath,
    args: [join(repoRoot, 'packages/server/src/main.ts'), 'serve'],
    cwd: dir,
    logPath: join(dir, 'server.log'),
    env: {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: databaseUrl,
      TERDUT_BOOTSTRAP_TOKEN: bootstrapToken,
      LOG_LEVEL: 'warn',
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, {
    timeoutMs: 60_000,
    child,
    describe: () => `terdut-server did not become ready at ${url}/readyz`,
  });
  return { url, logPath: child.logPath };
}

async function api<T>(replica: ServerReplica, path: string): Promise<T> {
  const res = await fetch(`${replica.url}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
  assert.equal(res.status, 200, `GET ${path}: ${await res.clone().text()}`);
  return (await res.json()) as T;
}

/**
 * Webhook requests an Alertmanager has completed with a 2xx answer, from its
 * own metrics (summed over series). Not `alertmanager_notifications_total`:
 * that counts a notification when it starts, before the request returns.
 */
async function notificationsSent(alertmanager: RunningAlertmanager): Promise<number> {
  const metrics = await (await fetch(`${alertmanager.url}/metrics`)).text();
  const sum = (name: string): number =>
    [...metrics.matchAll(new RegExp(`^${name}\\{[^}]*integration="webhook"[^}]*\\} (\\d+)`, 'gm'))].reduce(
      (total, match) => total + Number(match[1]),
      0,
    );
  return (
    sum('alertmanager_notification_requests_total') - sum('alertmanager_notification_requests_failed_total')
  );
}

before(async () => {
  database = await createTestPostgres();
  replicas = [await startServerReplica(database.url), await startServerReplica(database.url)];
  const bootstrap = await fetch(`${replicas[0]!.url}/api/bootstrap`, {
    method: 'POST',
    headers: { authorization: `Bearer ${bootstrapToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', email: 'admin@example.com' }),
  });
  assert.equal(bootstrap.status, 201, await bootstrap.clone().text());
  apiKey = ((await bootstrap.json()) as { api_key: { key: string } }).api_key.key;
  for (const replica of replicas) {
    alertmanagers.push(
      await startAlertmanager({
        webhookUrl: `${replica.url}/api/webhook/alertmanager`,
        apiKey,
        groupBy: ['alertname', 'cluster'],
      }),
    );
  }
});

after(async () => {
  await Promise.all(alertmanagers.map((alertmanager) => alertmanager.stop()));
  await processes.stop();
  await database?.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

test('alerts posted to Alertmanager become one incident that resolves when Alertmanager resolves them, with no duplicate from a second Alertmanager', async () => {
  const alerts = [
    { labels: { alertname: 'E2EDiskFull', cluster: 'eu-1', instance: 'db-1', severity: 'critical' } },
    { labels: { alertname: 'E2EDiskFull', cluster: 'eu-1', instance: 'db-2', severity: 'warning' } },
  ];
  for (const alertmanager of alertmanagers) await alertmanager.postAlerts(alerts);

  // Both Alertmanagers must have delivered before "no duplicate" means anything.
  await waitUntil(
    async () => (await Promise.all(alertmanagers.map(notificationsSent))).every((n) => n >= 1),
    {
      timeoutMs: 30_000,
      describe: () => 'both Alertmanagers should have delivered a firing notification',
    },
  );
  const open = await api<Incident[]>(replicas[1]!, '/api/incidents');
  const ours = open.filter((incident) => incident.group_key.includes('E2EDiskFull'));
  if (ours.length !== 1) {
    const alertsSeen = await api<unknown[]>(replicas[0]!, '/api/alerts');
    assert.fail(`expected one incident, got ${JSON.stringify(open)}; alerts: ${JSON.stringify(alertsSeen)}`);
  }
  const incident = await api<Incident>(replicas[0]!, `/api/incidents/${ours[0]!.id}`);
  assert.equal(incident.status, 'triggered');
  assert.deepEqual(incident.alerts?.map((alert) => alert.labels.instance).sort(), ['db-1', 'db-2']);
  const firing = await api<unknown[]>(replicas[0]!, '/api/alerts?status=firing');
  assert.equal(firing.length, 2, `expected two alerts, got ${JSON.stringify(firing)}`);

  const endsAt = new Date(Date.now() - 1000).toISOString();
  for (const alertmanager of alertmanagers) {
    await alertmanager.postAlerts(alerts.map((alert) => ({ ...alert, endsAt })));
  }
  await waitUntil(
    async () => (await Promise.all(alertmanagers.map(notificationsSent))).every((n) => n >= 2),
    {
      timeoutMs: 30_000,
      describe: () => 'both Alertmanagers should have delivered a resolved notification',
    },
  );
  await waitUntil(
    async () => (await api<Incident>(replicas[1]!, `/api/incidents/${incident.id}`)).status === 'resolved',
    {
      timeoutMs: 30_000,
      describe: () => `incident ${incident.id} did not resolve after Alertmanager resolved its alerts`,
    },
  );
  const resolved = await api<Incident>(replicas[0]!, `/api/incidents/${incident.id}`);
  assert.equal(resolved.resolution_source, 'alerts');
  assert.ok(resolved.alerts?.every((alert) => alert.status === 'resolved'));
  const all = await api<Incident[]>(replicas[0]!, '/api/incidents?status=resolved');
  assert.equal(
    all.filter((i) => i.group_key.includes('E2EDiskFull')).length,
    1,
    'resolving created a new incident',
  );
});
