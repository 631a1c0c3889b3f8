/**
 * A replica remembers who owns an API key for API_KEY_CACHE_MS, and a
 * revocation still takes effect at once: on the replica that made it (it
 * forgets its keys itself) and on every other (the database's notification,
 * migration 0990). A replica that misses the notification refuses the key
 * at the latest API_KEY_CACHE_MS after it last read it. The replicas here
 * are two apps in this process, each with its own connections to one
 * PostgreSQL, as two servers behind a load balancer would have; their clock
 * stands still unless a test moves it, so only a notification can make a
 * remembered key stop working.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ManualClock,
  createTestPostgres,
  forEachDatabase,
  startTestApp,
  type TestApp,
  type TestUser,
} from '@terdut/test-support';
import { openPostgres, type Database } from '../db/database.ts';
import { generateApiKey, hashApiKey } from '../auth/secrets.ts';
import { insertKey, type ApiKeyOwnerRow } from '../repositories/api-keys.ts';
import { insertUser } from '../repositories/users.ts';
import { API_KEY_CACHE_MS, ApiKeyOwnerCache, CREDENTIALS_CHANNEL } from './api-key-cache.ts';

const owner = (keyId: number): ApiKeyOwnerRow => ({
  key_id: keyId,
  last_used_at: null,
  user_id: 1,
  username: 'kim',
  role: 'member',
  kind: 'person',
});

describe('the cache of API key owners', () => {
  test('an owner answers for 5 s after its read started, then must be read again', () => {
    const clock = new ManualClock();
    const cache = new ApiKeyOwnerCache(clock);
    const read = cache.beginRead();
    // The query took a while: the bound counts from when it started.
    clock.advance(1_000);
    cache.remember('hash', owner(1), read);
    clock.advance(API_KEY_CACHE_MS - 1_001);
    assert.equal(cache.get('hash')?.key_id, 1);
    clock.advance(1);
    assert.equal(cache.get('hash'), undefined);
  });

  test('a read that started before everything was forgotten is not remembered', () => {
    const cache = new ApiKeyOwnerCache(new ManualClock());
    const read = cache.beginRead();
    // The key is revoked while the read is on the wire; the read may have seen it alive.
    cache.clear();
    cache.remember('hash', owner(1), read);
    assert.equal(cache.get('hash'), undefined);
  });

  test('when full, the key read longest ago is forgotten first', () => {
    const cache = new ApiKeyOwnerCache(new ManualClock(), { maxEntries: 2 });
    for (const [hash, keyId] of [
      ['first', 1],
      ['second', 2],
      ['third', 3],
    ] as const) {
      cache.remember(hash, owner(keyId), cache.beginRead());
    }
    assert.equal(cache.size, 2);
    assert.equal(cache.get('first'), undefined);
    assert.equal(cache.get('second')?.key_id, 2);
    assert.equal(cache.get('third')?.key_id, 3);
  });
});

forEachDatabase('API keys on one replica', (database) => {
  let server: TestApp;
  let admin: TestUser;
  before(async () => {
    server = await startTestApp(database(), { clock: new ManualClock() });
    admin = await server.createUser('one-replica-admin', 'admin');
  });
  after(() => server.close());

  test('a key revoked on this replica is refused by its very next request, though it was just used', async () => {
    // Several times over: this replica's own notification could win the race now and then.
    for (let round = 0; round < 10; round += 1) {
      const created = await server.request({
        method: 'POST',
        url: `/api/users/${admin.id}/api-keys`,
        as: admin,
        payload: { name: `round-${round}` },
      });
      assert.equal(created.status, 201);
      const key = created.body.key as string;
      assert.equal((await server.request({ method: 'GET', url: '/api/me', as: key })).status, 200);
      const revoked = await server.request({
        method: 'DELETE',
        url: `/api/users/${admin.id}/api-keys/${created.body.id}`,
        as: admin,
      });
      assert.equal(revoked.status, 204);
      const after = await server.request({ method: 'GET', url: '/api/me', as: key });
      assert.equal(after.status, 401, `round ${round}: the revoked key still worked`);
    }
  });
});

describe('API keys on two replicas of one PostgreSQL', () => {
  let postgres: Awaited<ReturnType<typeof createTestPostgres>>;
  let otherConnections: Database;
  const clock = new ManualClock();
  /** Where changes are made. */
  let replicaA: TestApp;
  /** Where keys were remembered before the change. */
  let replicaB: TestApp;
  let admin: TestUser;
  let people = 0;

  before(async () => {
    postgres = await createTestPostgres();
    otherConnections = await openPostgres(postgres.url, { max: 5 });
    replicaA = await startTestApp(postgres.db, { clock });
    replicaB = await startTestApp(otherConnections, { clock });
    admin = await replicaA.createUser('admin', 'admin');
  });
  after(async () => {
    await replicaA?.close();
    await replicaB?.close();
    await otherConnections?.close();
    await postgres?.drop();
  });

  const newPerson = (role: 'admin' | 'member' = 'member') => {
    people += 1;
    return replicaA.createUser(`person-${people}`, role);
  };

  /** The id of a person's one key, as replica A lists it. */
  /** The admin revokes the person's only key through replica A. */
  async function revokeOnlyKeyOnA(person: TestUser): Promise<void> {
    const keys = await replicaA.request({
      method: 'GET',
      url: `/api/users/${person.id}/api-keys`,
      as: admin,
    });
    assert.equal(keys.body.length, 1);
    const revoked = await replicaA.request({
      method: 'DELETE',
      url: `/api/users/${person.id}/api-keys/${keys.body[0].id as number}`,
      as: admin,
    });
    assert.equal(revoked.status, 204);
  }

  /**
   * The status `url` answers on `replica`, polled until it is `expected` or
   * a second has passed: the notification reaches the other replica a
   * moment after the change commits, not before the change's answer. A
   * second is far inside the 5 s bound, and the clock stands still, so the
   * remembered key cannot simply have expired.
   */
  async function statusWithinASecond(
    replica: TestApp,
    url: string,
    key: string,
    expected: number,
  ): Promise<number> {
    const deadline = Date.now() + 1_000;
    for (;;) {
      const { status } = await replica.request({ method: 'GET', url, as: key });
      if (status === expected || Date.now() > deadline) return status;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  test('a key revoked on one replica is refused at once on the other, which had just used it', async () => {
    const person = await newPerson();
    assert.equal((await replicaB.request({ method: 'GET', url: '/api/me', as: person })).status, 200);
    await revokeOnlyKeyOnA(person);
    assert.equal(await statusWithinASecond(replicaB, '/api/me', person.key, 401), 401);
  });

  test('a demoted admin loses admin-only routes at once on the other replica', async () => {
    const demoted = await newPerson('admin');
    assert.equal((await replicaB.request({ method: 'GET', url: '/api/audit', as: demoted })).status, 200);
    const changed = await replicaA.request({
      method: 'PUT',
      url: `/api/users/${demoted.id}/role`,
      as: admin,
      payload: { role: 'member' },
    });
    assert.equal(changed.status, 200);
    assert.equal(await statusWithinASecond(replicaB, '/api/audit', demoted.key, 403), 403);
    // Still signed in as the member they now are.
    assert.equal((await replicaB.request({ method: 'GET', url: '/api/me', as: demoted })).status, 200);
  });

  test("a deleted person's key stops working at once on the other replica", async () => {
    const leaving = await newPerson();
    // Not /api/me, which looks the person up again whatever authentication said.
    assert.equal((await replicaB.request({ method: 'GET', url: '/api/users', as: leaving })).status, 200);
    const deleted = await replicaA.request({ method: 'DELETE', url: `/api/users/${leaving.id}`, as: admin });
    assert.equal(deleted.status, 204);
    assert.equal(await statusWithinASecond(replicaB, '/api/users', leaving.key, 401), 401);
  });

  test('a key refused as unknown works as soon as it exists: refusals are not remembered', async () => {
    const key = generateApiKey();
    assert.equal((await replicaB.request({ method: 'GET', url: '/api/me', as: key })).status, 401);
    // Created behind the replicas' backs: no notification is sent for a new key.
    const user = await insertUser(postgres.db, {
      username: 'newcomer',
      email: 'newcomer@example.com',
      role: 'member',
    });
    await insertKey(postgres.db, user.id, 'first', hashApiKey(key));
    assert.equal((await replicaB.request({ method: 'GET', url: '/api/me', as: key })).status, 200);
  });

  test('using a key makes no replica forget its keys (marking it used announces nothing)', async () => {
    const heard: string[] = [];
    const stop = await postgres.db.listen(CREDENTIALS_CHANNEL, (payload) => heard.push(payload));
    try {
      const person = await newPerson();
      const before = await postgres.db.query<{ last_used_at: Date | null }>(
        'SELECT last_used_at FROM api_keys WHERE user_id = $1',
        [person.id],
      );
      assert.equal(before.rows[0]!.last_used_at, null);
      assert.equal((await replicaB.request({ method: 'GET', url: '/api/me', as: person })).status, 200);
      const after = await postgres.db.query<{ last_used_at: Date | null }>(
        'SELECT last_used_at FROM api_keys WHERE user_id = $1',
        [person.id],
      );
      assert.notEqual(after.rows[0]!.last_used_at, null, 'the key was marked used');
      // Notifications arrive in commit order: once this one is heard, one from the use would have been.
      await postgres.db.notify(CREDENTIALS_CHANNEL, 'marker');
      const deadline = Date.now() + 5_000;
      while (!heard.includes('marker') && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.deepEqual(heard, ['marker']);
    } finally {
      await stop();
    }
  });

  test('a replica that hears no notification refuses a revoked key 5 s after it read it, not later', async () => {
    const services = replicaB.app.services;
    await services.authentication.stopListening();
    try {
      const person = await newPerson();
      assert.equal((await replicaB.request({ method: 'GET', url: '/api/me', as: person })).status, 200);
      await revokeOnlyKeyOnA(person);
      // What the bound allows: the key read a moment ago still answers...
      clock.advance(API_KEY_CACHE_MS - 1);
      assert.equal((await replicaB.request({ method: 'GET', url: '/api/me', as: person })).status, 200);
      // ...and no longer once API_KEY_CACHE_MS have passed since B read it.
      clock.advance(1);
      assert.equal((await replicaB.request({ method: 'GET', url: '/api/me', as: person })).status, 401);
    } finally {
      await services.authentication.listenForCredentialChanges();
    }
  });
});
