import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { keysForSecret, keysForTerdutServer } from './watches.ts';
import { checkpointSecretName, credentialsSecretName } from './names.ts';

const server = (
  namespace: string,
  name: string,
  database: TerdutServer['spec']['database'],
): TerdutServer => ({
  apiVersion: 'terdut.ryuvia.com/v1alpha1',
  kind: 'TerdutServer',
  metadata: { namespace, name, uid: `${namespace}-${name}`, generation: 1, resourceVersion: '1' },
  spec: { replicas: 1, database },
});

const zalando = server('oncall', 'a', {
  postgresql: { clusterName: 'db', user: 'app_user', databaseName: 'terdut', sslMode: 'require' },
});
const byUrl = server('oncall', 'b', { secretRef: { name: 'url', key: 'DATABASE_URL' } });

test('a database Secret appearing wakes every TerdutServer that names it, and only those', () => {
  const secret = {
    metadata: { namespace: 'oncall', name: 'app-user.db.credentials.postgresql.acid.zalan.do' },
  };
  assert.deepEqual(keysForSecret(secret, 'terdut-system', [zalando, byUrl]), ['oncall/a']);
  assert.deepEqual(
    keysForSecret({ metadata: { namespace: 'oncall', name: 'url' } }, 'terdut-system', [zalando, byUrl]),
    ['oncall/b'],
  );
  assert.deepEqual(
    keysForSecret({ metadata: { namespace: 'other', name: 'url' } }, 'terdut-system', [zalando, byUrl]),
    [],
  );
});

test('an OIDC client Secret appearing wakes the TerdutServers that mount it', () => {
  const sso: TerdutServer = {
    ...byUrl,
    metadata: { ...byUrl.metadata, name: 'sso' },
    spec: {
      ...byUrl.spec,
      oidc: {
        issuerURL: 'https://sso.example.com',
        clientID: 'terdut',
        clientSecretRef: { name: 'sso', key: 'secret' },
      },
    },
  };
  assert.deepEqual(
    keysForSecret({ metadata: { namespace: 'oncall', name: 'sso' } }, 'terdut-system', [zalando, byUrl, sso]),
    ['oncall/sso'],
  );
});

test('operator-namespace Secrets map back through owner labels, or by name for a hand-made checkpoint', () => {
  const labelled = {
    metadata: {
      namespace: 'terdut-system',
      name: 'anything',
      labels: { 'terdut.ryuvia.com/owner-namespace': 'oncall', 'terdut.ryuvia.com/owner-name': 'a' },
    },
  };
  assert.deepEqual(keysForSecret(labelled, 'terdut-system', []), ['oncall/a']);
  const handMade = { metadata: { namespace: 'terdut-system', name: checkpointSecretName(byUrl) } };
  assert.deepEqual(keysForSecret(handMade, 'terdut-system', [zalando, byUrl]), ['oncall/b']);
  const credentials = { metadata: { namespace: 'terdut-system', name: credentialsSecretName(zalando) } };
  assert.deepEqual(keysForSecret(credentials, 'terdut-system', [zalando, byUrl]), ['oncall/a']);
});

test('the token Secret maps to its owner through the owner reference', () => {
  const token = {
    metadata: {
      namespace: 'oncall',
      name: 'a-bootstrap-token',
      ownerReferences: [
        { apiVersion: 'terdut.ryuvia.com/v1alpha1', kind: 'TerdutServer', name: 'a', uid: 'x' },
      ],
    },
  };
  assert.deepEqual(keysForSecret(token, 'terdut-system', []), ['oncall/a']);
});

test("a status-only update (the operator's own write) does not start another pass; a spec change does", () => {
  const before = zalando;
  const statusOnly = {
    ...zalando,
    metadata: { ...zalando.metadata, resourceVersion: '2' },
    status: { url: 'x' },
  };
  assert.deepEqual(keysForTerdutServer('updated', statusOnly, before), []);
  const specChange = { ...zalando, metadata: { ...zalando.metadata, resourceVersion: '3', generation: 2 } };
  assert.deepEqual(keysForTerdutServer('updated', specChange, before), ['oncall/a']);
  const deleting = {
    ...zalando,
    metadata: { ...zalando.metadata, deletionTimestamp: '2026-01-01T00:00:00Z' },
  };
  assert.deepEqual(keysForTerdutServer('updated', deleting, before), ['oncall/a']);
  assert.deepEqual(keysForTerdutServer('added', zalando), ['oncall/a']);
});

test('operator-namespace Secret names stay unique and within the 253-character limit', () => {
  assert.notEqual(
    credentialsSecretName(server('a-b', 'c', byUrl.spec.database)),
    credentialsSecretName(server('a', 'b-c', byUrl.spec.database)),
  );
  const long = server('n'.repeat(63), 'x'.repeat(253), byUrl.spec.database);
  assert.ok(credentialsSecretName(long).length <= 253);
  assert.match(checkpointSecretName(long), /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
});
