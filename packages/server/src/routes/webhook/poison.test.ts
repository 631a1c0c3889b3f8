/**
 * Poison notifications: a notification the server cannot store must be a 400
 * (final for Alertmanager), never a 500 (retried forever, blocking the
 * group), and the group's next valid notification, its resolve included, must
 * still be applied. Plus the webhook's limits, and a server that keeps
 * answering /healthz while the largest accepted notification is applied.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { AddressInfo } from 'node:net';
import {
  forEachDatabase,
  startTestApp,
  type TestApp,
  type TestUser,
  firingAlert,
  notification,
  resolvedAlert,
  type WebhookPayloadJson,
} from '@terdut/test-support';
import { WEBHOOK_LIMITS } from '@terdut/contract';

const WEBHOOK = '/api/webhook/alertmanager';

/** A payload as raw JSON text, so escapes such as \u0000 and \ud800 reach the server unaltered. */
const asText = (payload: unknown, replace: [string, string]) =>
  JSON.stringify(payload).replace(replace[0], replace[1]);

forEachDatabase('poison notifications', (database) => {
  let server: TestApp;
  let alertmanager: TestUser;
  let groups = 0;
  before(async () => {
    server = await startTestApp(database());
    alertmanager = await server.createUser('alertmanager', 'admin');
  });
  after(() => server.close());

  const post = (body: string | WebhookPayloadJson) =>
    server.request({
      method: 'POST',
      url: WEBHOOK,
      as: alertmanager,
      headers: { 'content-type': 'application/json' },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });

  /** Posts `poison` for a fresh group, then that group's valid firing and resolved notifications. */
  async function assertGroupSurvives(
    poison: (groupKey: string) => string | WebhookPayloadJson,
    expectedError: RegExp,
  ) {
    const groupKey = `{}:{alertname="Poison${++groups}"}`;
    const spec = { name: `Poison${groups}`, labels: { instance: 'db-1' } };
    const refused = await post(poison(groupKey));
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(refused.body.error, expectedError);

    const firing = await post(notification({ groupKey, alerts: [firingAlert(spec)] }));
    assert.equal(firing.status, 200, JSON.stringify(firing.body));
    const incidentId = firing.body.incident_id as number;
    assert.ok(incidentId > 0, 'the valid notification opened an incident');
    const resolved = await post(notification({ groupKey, alerts: [resolvedAlert(spec)] }));
    assert.equal(resolved.status, 200);
    const incident = await server.request({
      method: 'GET',
      url: `/api/incidents/${incidentId}`,
      as: alertmanager,
    });
    assert.equal(incident.body.status, 'resolved', 'the resolve after the poison was applied');
  }

  const poisonedAlert = (groupKey: string, text: string) =>
    notification({
      groupKey,
      alerts: [firingAlert({ name: `Poison${groups}`, labels: { instance: text } })],
    });

  test('a NUL in a label value is 400 naming the field; the group goes on', async () => {
    await assertGroupSurvives(
      (groupKey) => asText(poisonedAlert(groupKey, 'POISON'), ['"POISON"', '"db\\u0000x"']),
      /field "alerts\.0\.labels\.instance" contains a NUL character or an unpaired surrogate/,
    );
  });

  test('an unpaired surrogate in an annotation is 400; the group goes on', async () => {
    await assertGroupSurvives(
      (groupKey) =>
        asText(
          notification({
            groupKey,
            alerts: [firingAlert({ name: `Poison${groups}`, annotations: { summary: 'POISON' } })],
          }),
          ['"POISON"', '"broken \\ud800 text"'],
        ),
      /field "alerts\.0\.annotations\.summary" contains/,
    );
  });

  test('a NUL in a label name is 400; the group goes on', async () => {
    await assertGroupSurvives(
      (groupKey) => asText(poisonedAlert(groupKey, 'x'), ['"instance"', '"inst\\u0000ance"']),
      /field "alerts\.0\.labels" has a key that contains a NUL/,
    );
  });

  test('a lone low surrogate in the group key is 400; the group goes on', async () => {
    await assertGroupSurvives(
      (groupKey) => asText(poisonedAlert(groupKey, 'x'), ['"groupKey":"', '"groupKey":"\\udc00']),
      /field "groupKey" contains/,
    );
  });

  test('a 10 kB fingerprint is 400 naming the limit; the group goes on', async () => {
    await assertGroupSurvives(
      (groupKey) => {
        const payload = poisonedAlert(groupKey, 'x');
        payload.alerts[0]!.fingerprint = 'f'.repeat(10_000);
        return payload;
      },
      new RegExp(
        `"alerts\\.0\\.fingerprint" must NOT have more than ${WEBHOOK_LIMITS.fingerprintLength} characters`,
      ),
    );
  });

  test('a 100 kB group key is 400 naming the limit', async () => {
    const response = await post(poisonedAlert('g'.repeat(100_000), 'x'));
    assert.equal(response.status, 400);
    assert.match(
      response.body.error,
      new RegExp(`"groupKey" must NOT have more than ${WEBHOOK_LIMITS.groupKeyBytes}`),
    );
  });

  test('a group key within the characters but beyond the bytes is 400 naming the byte limit', async () => {
    const response = await post(poisonedAlert('€'.repeat(WEBHOOK_LIMITS.groupKeyBytes - 10), 'x'));
    assert.equal(response.status, 400);
    assert.match(
      response.body.error,
      new RegExp(`"groupKey" is longer than ${WEBHOOK_LIMITS.groupKeyBytes} bytes`),
    );
  });

  // Alertmanager writes every label into the key under group_by: ['...']: two
  // label values of 2,048 characters, within the label limits, make a key too
  // long to index as it is. It was refused (400), so the alert never paged.
  test('an alert grouped by all its labels with long label values opens an incident, and its resolve resolves it', async () => {
    // Multi-byte characters where a stored key is cut; random text, as an index entry does not compress it.
    const query =
      '€'.repeat(680) +
      randomBytes(700)
        .toString('hex')
        .slice(0, 2_048 - 680);
    const labels = (trace: string) => ({ instance: 'db-1', team: 'b', query, trace });
    const groupKeyOf = (trace: string) =>
      `{}/{team="b"}:{alertname="LongLabels", instance="db-1", query="${query}", team="b", trace="${trace}"}`;
    const trace = randomBytes(1_024).toString('hex');
    const otherTrace = `${trace.slice(0, -1)}-`;
    const alertOf = (build: typeof firingAlert, ofTrace: string) =>
      notification({
        groupKey: groupKeyOf(ofTrace),
        alerts: [build({ name: 'LongLabels', labels: labels(ofTrace) })],
      });
    assert.ok(Buffer.byteLength(groupKeyOf(trace)) > 5_000);

    const opened = await post(alertOf(firingAlert, trace));
    assert.equal(opened.status, 200, JSON.stringify(opened.body));
    const incidentId = opened.body.incident_id as number;
    const repeat = await post(alertOf(firingAlert, trace));
    assert.equal(repeat.body.incident_id, incidentId, 'the repeat joins the same incident');
    const other = await post(alertOf(firingAlert, otherTrace));
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.notEqual(
      other.body.incident_id,
      incidentId,
      'a key that differs only at its end is another group',
    );

    const get = (id: number) =>
      server.request({ method: 'GET', url: `/api/incidents/${id}`, as: alertmanager });
    const incident = await get(incidentId);
    assert.equal(incident.body.status, 'triggered');
    assert.deepEqual(incident.body.alerts[0].labels, { alertname: 'LongLabels', ...labels(trace) });
    const storedKey = incident.body.group_key as string;
    assert.ok(
      Buffer.byteLength(storedKey) <= 2_000,
      `the stored key is ${Buffer.byteLength(storedKey)} bytes`,
    );
    assert.ok(storedKey.startsWith(`{}/{team="b"}:{alertname="LongLabels", instance="db-1", query="€€€`));

    const resolved = await post(alertOf(resolvedAlert, trace));
    assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
    assert.equal((await get(incidentId)).body.status, 'resolved');
    assert.equal((await get(incidentId)).body.resolution_source, 'alerts');
    assert.equal((await get(other.body.incident_id as number)).body.status, 'triggered');
  });

  test('a huge label value, too many labels, a long label name or too many alerts: 400 naming the limit', async () => {
    const cases: Array<[(payload: WebhookPayloadJson) => void, RegExp]> = [
      [
        (p) => (p.alerts[0]!.labels.instance = 'x'.repeat(7_000_000 / 4)),
        /"alerts\.0\.labels\.instance" must NOT have more than 2048/,
      ],
      [
        (p) =>
          Object.assign(
            p.alerts[0]!.labels,
            Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`l${i}`, 'v'])),
          ),
        /"alerts\.0\.labels" must NOT have more than 64 properties/,
      ],
      [
        (p) => (p.alerts[0]!.labels['n'.repeat(300)] = 'v'),
        /"alerts\.0\.labels" has a key "n+" that must NOT have more than 256 characters/,
      ],
      [
        (p) => (p.alerts[0]!.annotations.description = 'd'.repeat(20_000)),
        /"alerts\.0\.annotations\.description" must NOT have more than 16384/,
      ],
      [
        (p) =>
          (p.alerts = Array.from({ length: WEBHOOK_LIMITS.alerts + 1 }, (_, i) =>
            firingAlert({ labels: { i: String(i) } }),
          )),
        /"alerts" must be an array of at most 2000 alerts; set max_alerts: 2000 in Alertmanager's webhook_configs/,
      ],
      [
        (p) =>
          Object.assign(
            p.alerts[0]!.labels,
            Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`big${i}`, 'v'.repeat(2_000)])),
          ),
        /"alerts\.0\.labels" is too large: \d+ characters of names and values; at most 16384/,
      ],
    ];
    for (const [mutate, expected] of cases) {
      const payload = poisonedAlert(`{}:{alertname="Limits"}`, 'x');
      mutate(payload);
      const response = await post(payload);
      assert.equal(response.status, 400, String(expected));
      assert.match(response.body.error, expected);
    }
  });

  // Unknown fields are allowed (Alertmanager adds some), but not a shape
  // that takes far more heap than its size: three of these at 7.6 MiB each
  // ended the server at its heap limit when they were parsed.
  test('a body nested deeper than any notification is 400 before it is parsed, three at once too; the group goes on', async () => {
    const deeplyNested = (groupKey: string, depth: number) =>
      asText(notification({ groupKey, alerts: [firingAlert({ name: `Poison${groups}` })] }), [
        '{',
        `{"padding":${'['.repeat(depth)}${']'.repeat(depth)},`,
      ]);
    const largest = deeplyNested('{}:{alertname="Deep"}', 3_800_000);
    const refused = await Promise.all([post(largest), post(largest), post(largest)]);
    for (const response of refused) {
      assert.equal(response.status, 400);
      assert.match(response.body.error, /nests 3800001 levels deep; at most 32/);
    }
    await assertGroupSurvives((groupKey) => deeplyNested(groupKey, 100_000), /nests \d+ levels deep/);
  });

  test('a body far wider or denser than any notification is 400 before it is parsed; the group goes on', async () => {
    const padded = (groupKey: string, padding: string) =>
      asText(notification({ groupKey, alerts: [firingAlert({ name: `Poison${groups}` })] }), [
        '{',
        `{"padding":${padding},`,
      ]);
    const list = (count: number, item: string) => `[${Array(count).fill(item).join(',')}]`;
    // Four million numbers in one list held the event loop for 1.7 s.
    await assertGroupSurvives(
      (groupKey) => padded(groupKey, list(300_000, '0')),
      /an object or array of 300000 members; at most 10000/,
    );
    await assertGroupSurvives(
      (groupKey) => padded(groupKey, list(60, list(5_000, '[]'))),
      /holds 3000\d\d objects and arrays in \d+ characters; at most \d+ are read/,
    );
    await assertGroupSurvives(
      (groupKey) => padded(groupKey, list(40, list(10_000, '0'))),
      /holds 4000\d\d values in \d+ characters; at most \d+ are read/,
    );
  });

  test('/healthz answers within 1 s while the largest accepted notification is applied', async () => {
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = server.app.server.address() as AddressInfo;
    // The most alerts allowed, each with labels and annotations of a real-world size.
    const payload = notification({
      groupKey: '{}:{alertname="Largest"}',
      alerts: Array.from({ length: WEBHOOK_LIMITS.alerts }, (_, i) =>
        firingAlert({
          name: 'Largest',
          labels: {
            instance: `host-${i}.example:9100`,
            job: 'node',
            cluster: 'production-eu-1',
            pod: `p-${i}`,
          },
          annotations: { summary: `host-${i} is down`, description: 'x'.repeat(1_000) },
        }),
      ),
    });
    const body = JSON.stringify(payload);
    // The server runs in this process: the event loop's longest stall is the
    // longest any request (/healthz) could wait, whoever sends it.
    const stalls = monitorEventLoopDelay({ resolution: 10 });
    stalls.enable();
    const started = performance.now();
    const applied = send(port, 'POST', WEBHOOK, body, alertmanager.key);
    let slowest = 0;
    let probes = 0;
    let done = false;
    void applied.finally(() => (done = true));
    while (!done) {
      const probeStart = performance.now();
      const status = (await send(port, 'GET', '/healthz')).status;
      assert.equal(status, 200);
      slowest = Math.max(slowest, performance.now() - probeStart);
      probes++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const result = await applied;
    const took = performance.now() - started;
    stalls.disable();
    const longestStall = stalls.max / 1e6;
    assert.equal(result.status, 200, result.body.slice(0, 300));
    console.log(
      `longest event-loop stall ${Math.round(longestStall)} ms; largest notification (${(body.length / 1e6).toFixed(1)} MB) applied in ${Math.round(took)} ms; ${probes} /healthz probes, slowest ${Math.round(slowest)} ms`,
    );
    assert.ok(probes >= 2 || took < 1000, 'probes ran while the notification was applied');
    assert.ok(slowest < 1000, `/healthz took ${Math.round(slowest)} ms`);
    assert.ok(longestStall < 1000, `the event loop stalled for ${Math.round(longestStall)} ms`);
  });
});

function send(
  port: number,
  method: string,
  path: string,
  body?: string,
  key?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        headers: {
          ...(key ? { authorization: `Bearer ${key}` } : {}),
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
      },
      (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
