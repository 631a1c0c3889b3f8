/**
 * The operator's credential invariant, asked of the server itself: which
 * keys of the operator's identities (its admin user `terdut-operator` and
 * the `terdut-operator` service account) still authenticate. A deleted key
 * is gone from the server's key listing, so a listed key is a valid one.
 *
 * The question is asked as an auditor: an admin of its own, obtained once
 * per server with the bootstrap token through POST /api/bootstrap/recover
 * (what a person locked out would do), so the answer never depends on a
 * credential the operator holds.
 */
import assert from 'node:assert/strict';
import { TerdutApiError, TerdutClient } from '../../../packages/client/src/index.ts';
import type { KubeCredentials } from '../../peers/kube.ts';
import { getSecret, secretValue } from './operator.ts';

export interface OperatorKeys {
  adminKeys: number[];
  serviceAccountKeys: number[];
}

const auditors = new Map<string, TerdutClient>();

/** An admin client of the server at `baseUrl` that is not the operator. */
export async function auditorOf(
  admin: KubeCredentials,
  namespace: string,
  name: string,
  baseUrl: string,
): Promise<TerdutClient> {
  const known = auditors.get(baseUrl);
  if (known) return known;
  const secret = await getSecret(admin, namespace, `${name}-bootstrap-token`);
  const token = secretValue(secret, 'token')!;
  const recovered = await new TerdutClient({ baseUrl }).bootstrap.recover(token, {
    username: 'invariant-auditor',
    email: 'auditor@example.com',
  });
  const client = new TerdutClient({ baseUrl, token: recovered.api_key.key });
  auditors.set(baseUrl, client);
  return client;
}

/** The valid keys of the operator's identities, as the server lists them. */
export async function operatorKeysOnServer(auditor: TerdutClient): Promise<OperatorKeys> {
  const user = (await auditor.users.list()).find((u) => u.username === 'terdut-operator');
  const account = await auditor.serviceAccounts.findByName('terdut-operator');
  return {
    adminKeys: user ? (await auditor.users.listApiKeys(user.id)).map((k) => k.id) : [],
    serviceAccountKeys: account ? (await auditor.serviceAccounts.listKeys(account.id)).map((k) => k.id) : [],
  };
}

/**
 * Ready: the recorded key authenticates and is the only key of the operator's
 * identities. Deleted (`recorded` undefined): no key remains.
 */
export async function assertCredentialInvariant(
  auditor: TerdutClient,
  baseUrl: string,
  label: string,
  recorded?: { apiKey: string; keyId: number },
): Promise<void> {
  const keys = await operatorKeysOnServer(auditor);
  assert.deepEqual(keys.adminKeys, [], `${label}: a key of the operator's admin user is still valid`);
  assert.deepEqual(
    keys.serviceAccountKeys,
    recorded ? [recorded.keyId] : [],
    `${label}: the service account's valid keys are not exactly the recorded one`,
  );
  if (recorded) {
    const me = await new TerdutClient({ baseUrl, token: recorded.apiKey }).users.me();
    assert.equal(me.user.username, 'service:terdut-operator', `${label}: the recorded key authenticates`);
  }
}

/** A key that must no longer authenticate. */
export async function assertRefused(baseUrl: string, apiKey: string, label: string): Promise<void> {
  const error = await new TerdutClient({ baseUrl, token: apiKey }).users.me().catch((e: unknown) => e);
  assert.ok(error instanceof TerdutApiError && error.status === 401, `${label}: the key still works`);
}
