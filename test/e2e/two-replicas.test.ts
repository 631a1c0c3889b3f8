/**
 * End to end: two terdut-server processes (`node packages/server/src/main.ts
 * serve`) sharing one PostgreSQL database receive the same alert group at
 * the same moment, as two replicas behind a load balancer would from an
 * Alertmanager HA pair. Whatever the interleaving, each group has exactly one
 * open incident and each alert joins it once.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Incident } from '@terdut/contract';
import { ChildProcessGroup } from '../peers/child-processes.ts';
import { createTestPostgres } from '../support/databases.ts';
import { startServerProcess, type RunningServer } from '../support/server-process.ts';
import { insertUserWithKey } from '../support/users.ts';
import {
  firingAlert,
  notification,
  type WebhookAlertJson,
  type WebhookPayloadJson,
} from '../support/alertmanager-payloads.ts';

const processes = new ChildProcessGroup();
let database: Awaited<ReturnType<typeof createTestPostgres>>;
let servers: RunningServer[] = [];
let replicas: string[] = [];
let apiKey: string;

async function postWebhook(replica: string, payload: WebhookPayloadJson): Promise<number> {
  const response = await fetch(`${replica}/api/webhook/alertmanager`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(payload),
  });
  await response.arrayBuffer();
  return response.status;
}

async function get<T>(replica: string, path: string): Promise<T> {
  const response = await fetch(`${replica}${path}`, { headers: { authorization: `Bearer ${apiKey}` } });
  assert.equal(response.status, 200, `GET ${path}: ${await response.clone().text()}`);
  return (await response.json()) as T;
}

/** Incidents of a group, open or resolved, straight from the database both replicas share. */
async function incidentsOfGroup(groupKey: string): Promise<{ id: number; status: string }[]> {
  return (
    await database.db.query<{ id: number; status: string }>(
      'SELECT id, status FROM incidents WHERE group_key = $1 ORDER BY id',
      [groupKey],
    )
  ).rows;
}

/** `count` notifications, sent all at once, alternating between the two replicas. */
async function sendConcurrently(payloads: WebhookPayloadJson[]): Promise<number[]> {
  return Promise.all(
    payloads.map((payload, index) => postWebhook(replicas[index % replicas.length]!, payload)),
  );
}

before(async () => {
  database = await createTestPostgres();
  apiKey = (await insertUserWithKey(database.db, { username: 'alertmanager' })).key;
  servers = await Promise.all([0, 1].map(() => startServerProcess({ processes, databaseUrl: database.url })));
  replicas = servers.map((server) => server.url);
});

after(async () => {
  for (const server of servers) await server.stop();
  await processes.stop();
  await database?.drop();
});

test('20 concurrent notifications of one group split across two replicas make exactly one incident, each alert added once', async () => {
  const groupKey = '{}:{alertname="TwoReplicas"}';
  const pool: WebhookAlertJson[] = Array.from({ length: 10 }, (_, index) =>
    firingAlert({
      name: 'TwoReplicas',
      severity: index === 7 ? 'critical' : 'warning',
      labels: { instance: `host-${index}` },
    }),
  );
  // As the group grows, each notification carries the state Alertmanager had then.
  const payloads = Array.from({ length: 20 }, (_, index) =>
    notification({ groupKey, alerts: pool.slice(0, (index % pool.length) + 1) }),
  );
  const statuses = await sendConcurrently(payloads);
  assert.deepEqual(
    statuses,
    payloads.map(() => 200),
  );

  const incidents = await incidentsOfGroup(groupKey);
  assert.equal(incidents.length, 1, `expected one incident, got ${JSON.stringify(incidents)}`);
  const [incident] = incidents;
  assert.equal(incident!.status, 'triggered');
  const detail = await get<{ severity: string; alerts: unknown[] }>(
    replicas[1]!,
    `/api/incidents/${incident!.id}`,
  );
  assert.equal(detail.alerts.length, 10);
  assert.equal(detail.severity, 'critical');
  const timeline = await get<{ type: string; alert_id?: number }[]>(
    replicas[0]!,
    `/api/incidents/${incident!.id}/timeline`,
  );
  assert.equal(timeline.filter((event) => event.type === 'triggered').length, 1);
  const added = timeline.filter((event) => event.type === 'alert_added').map((event) => event.alert_id);
  assert.equal(added.length, 10, `alert_added events: ${JSON.stringify(timeline)}`);
  assert.equal(new Set(added).size, 10, 'no alert added twice');
  const alerts = await database.db.query<{ count: number }>(
    'SELECT count(*)::int AS count FROM alerts WHERE group_key = $1',
    [groupKey],
  );
  assert.equal(alerts.rows[0]!.count, 10, 'one alert row per fingerprint');
});

test('many groups at once across both replicas: one incident per group', async () => {
  const groups = Array.from({ length: 6 }, (_, index) => `{}:{alertname="Parallel${index}"}`);
  const payloads = groups.flatMap((groupKey, index) =>
    Array.from({ length: 6 }, () =>
      notification({ groupKey, alerts: [firingAlert({ name: `Parallel${index}` })] }),
    ),
  );
  const statuses = await sendConcurrently(payloads);
  assert.ok(
    statuses.every((status) => status === 200),
    JSON.stringify(statuses),
  );
  for (const groupKey of groups) assert.equal((await incidentsOfGroup(groupKey)).length, 1, groupKey);
});

test('after a manual resolve, concurrent notifications with a new alert open exactly one new incident', async () => {
  const groupKey = '{}:{alertname="AfterResolve"}';
  const steady = firingAlert({ name: 'AfterResolve', labels: { instance: 'steady' } });
  assert.equal(await postWebhook(replicas[0]!, notification({ groupKey, alerts: [steady] })), 200);
  const [first] = await incidentsOfGroup(groupKey);
  const resolve = await fetch(`${replicas[1]}/api/incidents/${first!.id}/resolve`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}` },
  });
  assert.equal(resolve.status, 200);

  // Firing-through repeats alone open nothing...
  const repeats = await sendConcurrently(
    Array.from({ length: 6 }, () => notification({ groupKey, alerts: [steady] })),
  );
  assert.ok(repeats.every((status) => status === 200));
  assert.equal((await incidentsOfGroup(groupKey)).length, 1);

  // ...a new alert in the group opens one new incident, however many replicas see it.
  const newcomer = firingAlert({ name: 'AfterResolve', labels: { instance: 'newcomer' } });
  const statuses = await sendConcurrently(
    Array.from({ length: 10 }, () => notification({ groupKey, alerts: [steady, newcomer] })),
  );
  assert.ok(statuses.every((status) => status === 200));
  const incidents = await incidentsOfGroup(groupKey);
  assert.deepEqual(
    incidents.map((incident) => incident.status),
    ['resolved', 'triggered'],
  );
  const open = await get<Incident[]>(replicas[0]!, '/api/incidents');
  assert.equal(open.filter((incident) => incident.group_key === groupKey).length, 1);
});

test('the database itself refuses a second open incident for a group (the backstop behind the advisory lock)', async () => {
  const groupKey = '{}:{alertname="TwoReplicas"}';
  await assert.rejects(
    database.db.query(
      `INSERT INTO incidents (group_key, title, triggered_at) VALUES ($1, 'duplicate', now())`,
      [groupKey],
    ),
    (error: { code?: string }) => error.code === '23505',
  );
});
