/**
 * Several new groups' first notifications in one statement
 * (openIfNewGroups): each group is decided as if it came alone, the
 * outcomes come back in the calls' order, and an alert another transaction
 * stores meanwhile rolls back the whole statement, so the caller can run
 * each call again on its own (gathered-calls.ts). On both databases.
 */
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase, newGroupCall } from '@terdut/test-support';
import type { Database } from '../db/database.ts';
import { openIfNewGroups } from './alert-groups.ts';

forEachDatabase('new groups at once', (database, kind) => {
  let db: Database;
  const now = new Date('2026-12-05T10:00:00Z');

  before(() => {
    db = database();
  });

  const newGroup = (groupKey: string, alertNames: string[]) => newGroupCall(db, groupKey, alertNames, now);

  const incidentOf = async (groupKey: string) =>
    (
      await db.query<{ id: number; alerts: number; events: number; escalations: number }>(
        `SELECT i.id,
                (SELECT count(*)::int FROM incident_alerts l WHERE l.incident_id = i.id) AS alerts,
                (SELECT count(*)::int FROM incident_events e WHERE e.incident_id = i.id) AS events,
                (SELECT count(*)::int FROM escalations e WHERE e.incident_id = i.id) AS escalations
           FROM incidents i WHERE i.group_key = $1`,
        [groupKey],
      )
    ).rows;

  test('each group opens its incident as if it came alone, and the outcomes keep the calls order', async () => {
    const calls = [
      await newGroup('at-once-c', ['AtOnceC1', 'AtOnceC2']),
      await newGroup('at-once-a', ['AtOnceA']),
      await newGroup('at-once-b', ['AtOnceB']),
    ];
    const outcomes = await openIfNewGroups(db, calls);
    for (const [index, call] of calls.entries()) {
      const [incident] = await incidentOf(call.groupKey);
      assert.ok(incident !== undefined, `${call.groupKey} has an incident`);
      assert.deepEqual(outcomes[index], { opened: incident.id });
      const carried = call.alerts.length;
      assert.deepEqual(
        { alerts: incident.alerts, events: incident.events, escalations: incident.escalations },
        // `triggered` and one `alert_added` per alert.
        { alerts: carried, events: 1 + carried, escalations: 1 },
      );
    }
  });

  test('a group that already has its incident, or comes twice, is "not new" and changes nothing', async () => {
    const open = await newGroup('at-once-open', ['AtOnceOpen']);
    await openIfNewGroups(db, [open]);
    const outcomes = await openIfNewGroups(db, [
      await newGroup('at-once-open', ['AtOnceOpenOther']),
      await newGroup('at-once-twice', ['AtOnceTwice']),
      await newGroup('at-once-twice', ['AtOnceTwiceAgain']),
    ]);
    const [twice, ...more] = await incidentOf('at-once-twice');
    assert.equal(more.length, 0, 'one incident for the group that came twice');
    assert.deepEqual(outcomes, ['not new', { opened: twice!.id }, 'not new']);
    const stored = await db.query(
      `SELECT 1 FROM alerts WHERE name IN ('AtOnceOpenOther', 'AtOnceTwiceAgain')`,
    );
    assert.equal(stored.rows.length, 0);
  });

  test('an alert another group already stored makes only that call "not new"', async () => {
    await openIfNewGroups(db, [await newGroup('at-once-first', ['AtOnceShared'])]);
    const outcomes = await openIfNewGroups(db, [
      await newGroup('at-once-second', ['AtOnceShared']),
      await newGroup('at-once-bystander', ['AtOnceBystander']),
    ]);
    const [bystander] = await incidentOf('at-once-bystander');
    assert.deepEqual(outcomes, ['not new', { opened: bystander!.id }]);
    assert.deepEqual(await incidentOf('at-once-second'), []);
  });

  test('an alert another transaction stores while the statement runs rolls the whole statement back', async (t) => {
    if (kind === 'pglite') return t.skip('one connection: no other transaction can run meanwhile');
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let stored!: () => void;
    const inserted = new Promise<void>((resolve) => (stored = resolve));
    // Another notification's transaction stores the alert and has not committed yet.
    const other = db.transaction(async (tx) => {
      await openIfNewGroups(tx, [await newGroup('at-once-racer', ['AtOnceRaced'])]);
      stored();
      await held;
    });
    await inserted;
    const groups = [
      await newGroup('at-once-innocent', ['AtOnceInnocent']),
      await newGroup('at-once-loser', ['AtOnceRaced']),
    ];
    // Its refusal is awaited from the start: it can arrive before the other
    // transaction's commit is seen here, and must not count as unhandled.
    const refused = assert.rejects(
      openIfNewGroups(db, groups),
      (error: { code?: string }) => error.code === '23505',
    );
    // It waits on the uncommitted alert's unique key...
    for (let waited = 0; ; waited += 20) {
      const waiting = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%terdut_intake_open%'`,
      );
      if (waiting.rows[0]!.n > 0) break;
      assert.ok(waited < 5000, 'the statement never waited for the other transaction');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // ...which commits: the statement fails whole, the innocent group included.
    release();
    await other;
    await refused;
    assert.deepEqual(await incidentOf('at-once-innocent'), []);
    assert.deepEqual(await incidentOf('at-once-loser'), []);
  });
});
