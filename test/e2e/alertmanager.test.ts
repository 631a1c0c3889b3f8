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
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Incident } from '@terdut/contract';
import { startAlertmanager, type RunningAlertmanager } from '../peers/alertmanager.ts';
import { ChildProcessGroup, waitUntil } from '../peers/child-processes.ts';
import { createTestPostgres } from '../support/databases.ts';
import { startServerProcess, TEST_BOOTSTRAP_TOKEN, type RunningServer } from '../support/server-process.ts';

const processes = new ChildProcessGroup();
const alertmanagers: RunningAlertmanager[] = [];
let database: Awaited<ReturnType<typeof createTestPostgres>> | undefined;
const replicas: RunningServer[] = [];
let apiKey: string;

async function api<T>(replica: RunningServer, path: string): Promise<T> {
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
  for (let i = 0; i < 2; i++)
    replicas.push(await startServerProcess({ processes, databaseUrl: database.url }));
  const bootstrap = await fetch(`${replicas[0]!.url}/api/bootstrap`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_BOOTSTRAP_TOKEN}`, 'content-type': 'application/json' },
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
  for (const replica of replicas) await replica.stop();
  await processes.stop();
  await database?.drop();
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

test('max_alerts: 1 and one of two alerts resolved: the incident stays open for the alert left out, which joins it next', async () => {
  const truncating = await startAlertmanager({
    webhookUrl: `${replicas[0]!.url}/api/webhook/alertmanager`,
    apiKey,
    groupBy: ['alertname'],
    maxAlerts: 1,
    repeatInterval: '3s',
  });
  try {
    const alerts = [
      { labels: { alertname: 'E2ETruncated', instance: 'a' } },
      { labels: { alertname: 'E2ETruncated', instance: 'b' } },
    ];
    await truncating.postAlerts(alerts);
    const ours = async () =>
      (await api<Incident[]>(replicas[0]!, '/api/incidents?limit=1000')).filter((incident) =>
        incident.group_key.includes('E2ETruncated'),
      );
    await waitUntil(async () => (await ours()).length === 1, {
      timeoutMs: 30_000,
      describe: () => 'the first notification (one alert listed, one left out) should open an incident',
    });
    const id = (await ours())[0]!.id;
    const listed = (await api<Incident>(replicas[0]!, `/api/incidents/${id}`)).alerts!;
    assert.equal(listed.length, 1, 'max_alerts: 1 lists one alert');
    const shown = listed[0]!.labels.instance;

    // The alert Alertmanager listed resolves; the other one fires on, left out of the notification.
    const sent = await notificationsSent(truncating);
    await truncating.postAlerts(
      alerts
        .filter((alert) => alert.labels.instance === shown)
        .map((alert) => ({ ...alert, endsAt: new Date(Date.now() - 1000).toISOString() })),
    );
    await waitUntil(
      async () =>
        (await api<Incident>(replicas[0]!, `/api/incidents/${id}`)).alerts!.some(
          (alert) => alert.status === 'resolved',
        ),
      { timeoutMs: 30_000, describe: () => `the resolve of ${shown} should reach incident ${id}` },
    );
    assert.ok((await notificationsSent(truncating)) > sent);
    assert.equal((await api<Incident>(replicas[0]!, `/api/incidents/${id}`)).status, 'triggered');

    // Once the resolved alert is sent, Alertmanager drops it: the next notification lists the other.
    await waitUntil(
      async () => (await api<Incident>(replicas[0]!, `/api/incidents/${id}`)).alerts!.length === 2,
      {
        timeoutMs: 30_000,
        describe: () => `the alert left out should join incident ${id}`,
      },
    );
    const incident = await api<Incident>(replicas[0]!, `/api/incidents/${id}`);
    assert.equal(incident.status, 'triggered');
    assert.deepEqual(
      incident.alerts!.filter((alert) => alert.status === 'firing').map((alert) => alert.labels.instance),
      [shown === 'a' ? 'b' : 'a'],
    );
    assert.equal((await ours()).length, 1, 'no second incident for the group');
  } finally {
    await truncating.stop();
  }
});

test("group_by: ['...'] with long label values: the alert opens an incident and resolves it, whatever the length of Alertmanager's group key", async () => {
  // Alertmanager writes every label into the group key; two values of 2,000
  // characters (within the webhook's label limits) make a key of over 4 kB.
  const everyLabel = await startAlertmanager({
    webhookUrl: `${replicas[0]!.url}/api/webhook/alertmanager`,
    apiKey,
    groupBy: ['...'],
  });
  try {
    const labels = {
      alertname: 'E2ELongLabels',
      query: 'q'.repeat(1_000) + randomBytes(500).toString('hex'),
      trace: randomBytes(1_000).toString('hex'),
    };
    await everyLabel.postAlerts([{ labels }]);
    const ours = async () =>
      (await api<Incident[]>(replicas[0]!, '/api/incidents?status=triggered&limit=1000')).filter((incident) =>
        incident.title.startsWith('E2ELongLabels'),
      );
    await waitUntil(async () => (await ours()).length === 1, {
      timeoutMs: 30_000,
      describe: () => `no incident opened for the long-labelled alert (log: ${everyLabel.logPath})`,
    });
    const id = (await ours())[0]!.id;
    const incident = await api<Incident>(replicas[0]!, `/api/incidents/${id}`);
    assert.equal(incident.alerts?.[0]?.labels.trace, labels.trace);

    await everyLabel.postAlerts([{ labels, endsAt: new Date(Date.now() - 1000).toISOString() }]);
    await waitUntil(
      async () => (await api<Incident>(replicas[0]!, `/api/incidents/${id}`)).status === 'resolved',
      { timeoutMs: 30_000, describe: () => `incident ${id} did not resolve with its alert` },
    );
  } finally {
    await everyLabel.stop();
  }
});

test('an alert whose start Alertmanager moved earlier (a second Prometheus heard from later) still resolves its incident', async () => {
  const labels = { alertname: 'E2EEarlierStart', cluster: 'eu-2', instance: 'db-1' };
  const alertmanager = alertmanagers[0]!;
  const known = new Date(Date.now() - 30_000).toISOString();
  await alertmanager.postAlerts([{ labels, startsAt: known }]);
  const ours = async () =>
    (await api<Incident[]>(replicas[0]!, '/api/incidents?limit=1000')).filter((incident) =>
      incident.group_key.includes('E2EEarlierStart'),
    );
  await waitUntil(async () => (await ours()).length === 1, {
    timeoutMs: 30_000,
    describe: () => 'the firing alert should open an incident',
  });
  const id = (await ours())[0]!.id;
  // The other replica's alert started earlier: Alertmanager keeps the earliest start...
  const earlier = new Date(Date.now() - 90_000).toISOString();
  await alertmanager.postAlerts([{ labels, startsAt: earlier }]);
  // ...and sends the resolve with it.
  await alertmanager.postAlerts([
    { labels, startsAt: earlier, endsAt: new Date(Date.now() - 1000).toISOString() },
  ]);
  await waitUntil(
    async () => (await api<Incident>(replicas[0]!, `/api/incidents/${id}`)).status === 'resolved',
    {
      timeoutMs: 30_000,
      describe: () => `incident ${id} did not resolve after Alertmanager resolved its alert`,
    },
  );
  assert.equal((await api<Incident>(replicas[0]!, `/api/incidents/${id}`)).resolution_source, 'alerts');
});
