/**
 * Calendar events' UIDs (RFC 5545: unique everywhere): the same shift
 * keeps its UID on every read, and two installations (staging and
 * production, subscribed in one calendar app) never share one.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, createTestPglite, startTestApp, type TestApp } from '@terdut/test-support';

const apps: TestApp[] = [];
after(async () => {
  for (const app of apps) await app.close();
});

/** A fresh installation with one weekly rotation; the UIDs of its feed's events. */
async function uidsOfNewInstallation(): Promise<() => Promise<string[]>> {
  const server = await startTestApp(await createTestPglite(), {
    clock: new ManualClock('2026-03-26T10:00:00Z'),
  });
  apps.push(server);
  const admin = await server.createUser('admin', 'admin');
  const call = async (url: string, payload: Record<string, unknown>) =>
    (await server.request({ method: 'POST', url, as: admin, payload })).body;
  const schedule = (await call('/api/schedules', { name: 'Ops', time_zone: 'UTC' })).id;
  const alice = await server.createUser('alice');
  await call(`/api/schedules/${schedule}/rotations`, {
    name: 'Weekly',
    participant_ids: [admin.id, alice.id],
    shift_length: 1,
    shift_unit: 'weeks',
    start_date: '2026-03-02',
    handoff_time: '09:00',
  });
  const path = new URL((await call(`/api/schedules/${schedule}/feed`, {})).url).pathname;
  return async () => {
    const text = (await server.request({ method: 'GET', url: path })).body as string;
    return [...text.matchAll(/^UID:(.+)\r$/gm)].map((match) => match[1]!);
  };
}

test('a shift keeps its UID on every read, and two installations never share one', async () => {
  const staging = await uidsOfNewInstallation();
  const production = await uidsOfNewInstallation();
  const [first, again, other] = [await staging(), await staging(), await production()];
  assert.ok(first.length > 5, `${first.length} events`);
  assert.deepEqual(again, first);
  assert.equal(other.length, first.length, 'the same schedule, set up alike');
  assert.equal(
    other.filter((uid) => first.includes(uid)).length,
    0,
    `shared UIDs: ${first[0]} and ${other[0]}`,
  );
  assert.match(first[0]!, /^schedule-\d+-\d+-user-\d+@[0-9a-f]{32}\.terdut$/);
});
