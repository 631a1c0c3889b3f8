/**
 * Minting the operator's service-account key with an admin key: create the
 * `terdut-operator` service account (which mints its first key), or, when it
 * exists (409: an earlier pass created it and its answer or its credentials
 * Secret was lost), adopt it by name and mint a fresh key. Keys of the
 * adopted account that nobody recorded are not revoked here: the sweep after
 * the credentials Secret is written revokes every key but the recorded one,
 * whichever pass minted them.
 */
import { TerdutApiError, type TerdutClient } from '@terdut/client';
import type { Failpoint } from './failpoint.ts';
import { serviceAccountName } from './names.ts';

export interface MintedKey {
  serviceAccountId: number;
  keyId: number;
  apiKey: string;
  adopted: boolean;
}

export async function mintServiceAccountKey(
  admin: TerdutClient,
  failpoint: Failpoint,
  now: () => Date,
): Promise<MintedKey> {
  try {
    const created = await admin.serviceAccounts.create(serviceAccountName, 'instance');
    failpoint('service-account-created');
    return {
      serviceAccountId: created.service_account.id,
      keyId: created.key.id,
      apiKey: created.key.key,
      adopted: false,
    };
  } catch (error) {
    if (!(error instanceof TerdutApiError && error.status === 409)) throw error;
  }
  const found = await admin.serviceAccounts.findByName(serviceAccountName);
  if (!found)
    throw new Error(
      `service account ${serviceAccountName} exists (409) but cannot be found by name; retrying`,
    );
  const key = await admin.serviceAccounts.createKey(found.id, `terdut-operator ${now().toISOString()}`);
  failpoint('service-account-key-minted');
  return { serviceAccountId: found.id, keyId: key.id, apiKey: key.key, adopted: true };
}
