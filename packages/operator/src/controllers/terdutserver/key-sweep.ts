/**
 * The credential invariant's one rule (bootstrap-protocol.md, "What the
 * operator guarantees"): the operator's identities on a server are its admin
 * user and the `terdut-operator` service account, and every key of theirs
 * except the one the operator keeps is revoked — before a pass says
 * Bootstrapped=True, before the checkpoint is deleted, and by the finalizer.
 * Keys minted by an interrupted pass or whose answer was lost on the network
 * are never known individually; listing the identities' keys finds them all.
 */
import { TerdutApiError, type TerdutClient } from '@terdut/client';
import type { Failpoint } from './failpoint.ts';
import { operatorAdmin, serviceAccountName } from './names.ts';

export interface SweepResult {
  serviceAccountKeys: number;
  adminKeys: number;
}

/**
 * With `client` (an admin or the instance service account), revokes every
 * key of the operator's admin user and of its service account except
 * `keepServiceAccountKeyId`. `self` is the key `client` authenticates with,
 * when it is one of those: it is revoked last (or kept, with `keepSelf`),
 * because after it nothing more can be asked. A key already gone (404) is
 * skipped; any other failure propagates, so nothing is reported swept that
 * was not.
 */
export async function revokeOperatorKeys(
  client: TerdutClient,
  options: {
    keepServiceAccountKeyId?: number;
    self?: { kind: 'admin' | 'service-account'; keyId: number };
    keepSelf?: boolean;
    failpoint: Failpoint;
  },
): Promise<SweepResult> {
  const result: SweepResult = { serviceAccountKeys: 0, adminKeys: 0 };
  let revokeSelf: (() => Promise<void>) | undefined;
  const gone = (error: unknown) => error instanceof TerdutApiError && error.status === 404;

  const account = await client.serviceAccounts.findByName(serviceAccountName);
  if (account) {
    for (const key of await client.serviceAccounts.listKeys(account.id)) {
      if (key.id === options.keepServiceAccountKeyId) continue;
      const revoke = async () => {
        try {
          await client.serviceAccounts.revokeKey(account.id, key.id);
          result.serviceAccountKeys += 1;
        } catch (error) {
          if (!gone(error)) throw error;
        }
        options.failpoint('sweep-service-account-key-revoked');
      };
      if (options.self?.kind === 'service-account' && options.self.keyId === key.id) revokeSelf = revoke;
      else await revoke();
    }
  }

  const admin = (await client.users.list()).find((user) => user.username === operatorAdmin.username);
  if (admin) {
    for (const key of await client.users.listApiKeys(admin.id)) {
      const revoke = async () => {
        try {
          await client.users.deleteApiKey(admin.id, key.id);
          result.adminKeys += 1;
        } catch (error) {
          if (!gone(error)) throw error;
        }
        options.failpoint('sweep-admin-key-revoked');
      };
      if (options.self?.kind === 'admin' && options.self.keyId === key.id) revokeSelf = revoke;
      else await revoke();
    }
  }

  if (revokeSelf && !options.keepSelf) await revokeSelf();
  return result;
}

/** Whether an API key authenticates: a 401 or 403 says no; other errors propagate. */
export async function keyWorks(client: TerdutClient): Promise<boolean> {
  try {
    await client.users.me();
    return true;
  } catch (error) {
    if (error instanceof TerdutApiError && (error.status === 401 || error.status === 403)) return false;
    throw error;
  }
}
