/**
 * Keys of an adopted service account that no Secret records. The operator
 * adopts its account (409 on create) only when an earlier pass created it or
 * minted a key and crashed before writing the credentials Secret; that key
 * is valid on the server and nobody holds it, so it must go (operator rule 5:
 * exactly one key in use).
 */
import { TerdutApiError, type TerdutClient } from '@terdut/client';

/**
 * Revokes every key of service account `serviceAccountId` except `keep`
 * (a key the operator has recorded); answers how many it revoked. A key
 * already gone (404, e.g. a concurrent revoke) is skipped; any other failure
 * propagates, so the pass is retried with back-off before a new key is minted
 * and keys cannot pile up while the server misbehaves.
 */
export async function revokeUnrecordedKeys(
  admin: TerdutClient,
  serviceAccountId: number,
  keep: ReadonlySet<number>,
): Promise<number> {
  let revoked = 0;
  for (const key of await admin.serviceAccounts.listKeys(serviceAccountId)) {
    if (keep.has(key.id)) continue;
    try {
      await admin.serviceAccounts.revokeKey(serviceAccountId, key.id);
      revoked += 1;
    } catch (error) {
      if (!(error instanceof TerdutApiError && error.status === 404)) throw error;
    }
  }
  return revoked;
}
