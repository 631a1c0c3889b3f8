/**
 * An incident lists each of its alerts as it was in that incident: the
 * occurrence that joined it, with its start, its end and its annotations,
 * even after the alert (one row per fingerprint) fired again into a newer
 * incident (migration 1090).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  forEachDatabase,
  ManualClock,
  startTestApp,
  type TestApp,
  type TestUser,
  firingAlert,
  notification,
  postNotification,
  resolvedAlert,
  type AlertSpec,
} from '@terdut/test-support';
import { Value } from 'typebox/value';
import { IncidentSchema, type Alert, type Incident } from '@terdut/contract';
import { listAlertsOfIncident } from '../../repositories/alerts.ts';
import { serializeAlert } from '../alerts/wire.ts';

const MINUTE = 60_000;

forEachDatabase('past occurrences on the incident page', (database) => {
  let server: TestApp;
  let alertmanager: TestUser;
  let alice: TestUser;
  const clock = new ManualClock('2026-07-27T10:00:00Z');

  before(async () => {
    server = await startTestApp(database(), { clock });
    alertmanager = await server.createUser('am-occurrences', 'member');
    alice = await server.createUser('alice-occurrences', 'member');
  });
  after(() => server.close());

  let groups = 0;
  /** A group of its own, and its notifications. */
  const group = () => {
    groups += 1;
    const groupKey = `occurrences-${process.pid}-${groups}`;
    return async (...alerts: ReturnType<typeof firingAlert>[]) => {
      clock.advance(MINUTE);
      return (await postNotification(server, alertmanager, notification({ groupKey, alerts }))).incident_id;
    };
  };
  const minutesAgo = (minutes: number) => new Date(clock.now().getTime() - minutes * MINUTE);

  /** GET /api/incidents/{id}, checked against the contract and against the rows paging messages are made of. */
  const page = async (id: number): Promise<Incident> => {
    const response = await server.request({ method: 'GET', url: `/api/incidents/${id}`, as: alice });
    assert.equal(response.status, 200);
    assert.ok(
      Value.Check(IncidentSchema, response.body),
      JSON.stringify([...Value.Errors(IncidentSchema, response.body)]),
    );
    const rows = (await listAlertsOfIncident(server.db, id)).map(serializeAlert);
    assert.deepEqual(response.body.alerts, JSON.parse(JSON.stringify(rows)), 'the page and the rows agree');
    return response.body;
  };
  /** What a reader of incident `id` sees of its alert `instance`. */
  const seen = async (id: number, instance: string) => {
    const alert = (await page(id)).alerts!.find((candidate: Alert) => candidate.labels.instance === instance);
    assert.ok(alert, `incident ${id} lists ${instance}`);
    return {
      status: alert.status,
      starts_at: alert.starts_at,
      ends_at: alert.ends_at,
      summary: alert.annotations.summary,
      resolution_source: alert.resolution_source,
      incident_id: alert.incident_id,
    };
  };

  test('a resolved incident shows its alert resolved, with its own start, end and summary, after the alert fired again into a newer incident', async () => {
    const send = group();
    const disk = (startsAt: Date, summary: string, endsAt?: Date): AlertSpec => ({
      name: 'DiskFull',
      labels: { instance: 'db-1' },
      startsAt,
      ...(endsAt !== undefined ? { endsAt } : {}),
      annotations: { summary },
    });
    const firstStart = minutesAgo(5);
    const firstEnd = minutesAgo(-1);
    const first = (await send(firingAlert(disk(firstStart, 'disk 91% full'))))!;
    await send(resolvedAlert(disk(firstStart, 'disk 91% full', firstEnd)));
    clock.advance(60 * MINUTE);
    const secondStart = minutesAgo(1);
    const second = (await send(firingAlert(disk(secondStart, 'disk 97% full'))))!;
    assert.notEqual(second, first, 'the alert that fired again opened a new incident');

    const firstAsItWas = {
      status: 'resolved',
      starts_at: firstStart.toISOString(),
      ends_at: firstEnd.toISOString(),
      summary: 'disk 91% full',
      resolution_source: 'alertmanager',
      incident_id: second,
    };
    assert.deepEqual(await seen(first, 'db-1'), firstAsItWas);
    assert.deepEqual(await seen(second, 'db-1'), {
      status: 'firing',
      starts_at: secondStart.toISOString(),
      ends_at: undefined,
      summary: 'disk 97% full',
      resolution_source: undefined,
      incident_id: second,
    });

    // A third occurrence: each earlier incident keeps its own.
    const secondEnd = minutesAgo(-1);
    await send(resolvedAlert(disk(secondStart, 'disk 97% full', secondEnd)));
    clock.advance(60 * MINUTE);
    const third = (await send(firingAlert(disk(minutesAgo(1), 'disk 99% full'))))!;
    assert.deepEqual(await seen(first, 'db-1'), { ...firstAsItWas, incident_id: third });
    assert.deepEqual(await seen(second, 'db-1'), {
      status: 'resolved',
      starts_at: secondStart.toISOString(),
      ends_at: secondEnd.toISOString(),
      summary: 'disk 97% full',
      resolution_source: 'alertmanager',
      incident_id: third,
    });
    assert.equal((await seen(third, 'db-1')).status, 'firing');
  });

  test('an alert that fires again with a new start and no resolve in between shows, in the incident it left, as ended when the new occurrence began', async () => {
    const send = group();
    const spec = { name: 'Restarted', labels: { instance: 'api-1' } };
    const firstStart = minutesAgo(3);
    const first = (await send(firingAlert({ ...spec, startsAt: firstStart })))!;
    const resolve = await server.request({
      method: 'POST',
      url: `/api/incidents/${first}/resolve`,
      as: alice,
    });
    assert.equal(resolve.status, 200);
    // Prometheus restarted: the alert is sent again with a new start, never resolved.
    const secondStart = minutesAgo(0);
    const second = (await send(firingAlert({ ...spec, startsAt: secondStart })))!;
    assert.notEqual(second, first);

    assert.deepEqual(await seen(first, 'api-1'), {
      status: 'resolved',
      starts_at: firstStart.toISOString(),
      ends_at: secondStart.toISOString(),
      summary: 'Restarted is firing',
      resolution_source: undefined,
      incident_id: second,
    });
    assert.equal((await seen(second, 'api-1')).status, 'firing');
  });

  test('an alert Alertmanager resolved by timeout and Prometheus sent again (same start) shows resolved in the incident it left', async () => {
    const send = group();
    const spec = { name: 'Partitioned', labels: { instance: 'edge-1' }, startsAt: minutesAgo(2) };
    const first = (await send(firingAlert(spec)))!;
    const end = minutesAgo(-1);
    await send(resolvedAlert({ ...spec, endsAt: end }));
    clock.advance(15 * MINUTE);
    const second = (await send(firingAlert(spec)))!;
    assert.notEqual(second, first, 'it fires again, in a new incident');

    assert.deepEqual(await seen(first, 'edge-1'), {
      status: 'resolved',
      starts_at: spec.startsAt.toISOString(),
      ends_at: end.toISOString(),
      summary: 'Partitioned is firing',
      resolution_source: 'alertmanager',
      incident_id: second,
    });
    assert.equal((await seen(second, 'edge-1')).status, 'firing');

    // Once more: the first incident keeps the end it had, the second gets its own.
    const secondEnd = minutesAgo(-1);
    await send(resolvedAlert({ ...spec, endsAt: secondEnd }));
    clock.advance(15 * MINUTE);
    const third = (await send(firingAlert(spec)))!;
    assert.equal((await seen(first, 'edge-1')).ends_at, end.toISOString());
    assert.deepEqual(await seen(second, 'edge-1'), {
      status: 'resolved',
      starts_at: spec.startsAt.toISOString(),
      ends_at: secondEnd.toISOString(),
      summary: 'Partitioned is firing',
      resolution_source: 'alertmanager',
      incident_id: third,
    });
  });

  test('an alert that resolves and fires again while its incident stays open shows firing there, with its new start', async () => {
    const send = group();
    const steady = { name: 'Pair', labels: { instance: 'steady' }, startsAt: minutesAgo(10) };
    const flappy = { name: 'Pair', labels: { instance: 'flappy' }, startsAt: minutesAgo(10) };
    const id = (await send(firingAlert(steady), firingAlert(flappy)))!;
    await send(firingAlert(steady), resolvedAlert({ ...flappy, endsAt: minutesAgo(0) }));
    const again = minutesAgo(0);
    assert.equal(await send(firingAlert(steady), firingAlert({ ...flappy, startsAt: again })), id);

    assert.deepEqual(await seen(id, 'flappy'), {
      status: 'firing',
      starts_at: again.toISOString(),
      ends_at: undefined,
      summary: 'Pair is firing',
      resolution_source: undefined,
      incident_id: id,
    });
  });

  test('a link written before its occurrence end was recorded shows the alert resolved, its end unknown', async () => {
    const send = group();
    const spec = { name: 'Older', labels: { instance: 'old-1' } };
    const firstStart = minutesAgo(5);
    const first = (await send(firingAlert({ ...spec, startsAt: firstStart })))!;
    await send(resolvedAlert({ ...spec, startsAt: firstStart, endsAt: minutesAgo(0) }));
    clock.advance(60 * MINUTE);
    const second = (await send(
      firingAlert({ ...spec, startsAt: minutesAgo(0), annotations: { summary: 'now' } }),
    ))!;
    // As every link of an occurrence that moved on before migration 1090 is.
    await server.db.query(
      `UPDATE incident_alerts
          SET occurrence_ends_at = NULL, occurrence_annotations = NULL, occurrence_resolution_source = NULL
        WHERE incident_id = $1`,
      [first],
    );

    assert.deepEqual(await seen(first, 'old-1'), {
      status: 'resolved',
      starts_at: firstStart.toISOString(),
      ends_at: undefined,
      summary: 'now',
      resolution_source: undefined,
      incident_id: second,
    });
  });
});
