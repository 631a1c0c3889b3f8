/**
 * The exchange with the server that yields an admin key: POST /api/bootstrap
 * on a fresh server, POST /api/bootstrap/recover on one already bootstrapped
 * (403), both with the bootstrap token. The answer is turned into the
 * checkpoint, which bootstrap.ts writes before the key is used for anything.
 */
import { TerdutApiError, type BootstrapResult, type TerdutClient } from '@terdut/client';
import type { Checkpoint } from './checkpoint.ts';
import type { Failpoint } from './failpoint.ts';
import { operatorAdmin } from './names.ts';

/** What one exchange call got: an admin key, or the server's refusal. */
export type ExchangeAnswer =
  { admin: Checkpoint } | { refused: 'already-bootstrapped' } | { refused: 'token'; by: string };

const is = (error: unknown, status: number): boolean =>
  error instanceof TerdutApiError && error.status === status;

/** What is checkpointed of a bootstrap or recover answer: the admin key and what revokes it later. */
export function checkpointOf(result: BootstrapResult, source: 'bootstrap' | 'recover'): Checkpoint {
  return { adminKey: result.api_key.key, adminUserId: result.user.id, adminKeyId: result.api_key.id, source };
}

/** POST /api/bootstrap: 403 means already bootstrapped, 401 a token the server does not hold. */
export async function bootstrapServer(
  client: TerdutClient,
  token: string,
  failpoint: Failpoint,
): Promise<ExchangeAnswer> {
  try {
    const result = await client.bootstrap.bootstrap(token, operatorAdmin);
    failpoint('bootstrap');
    return { admin: checkpointOf(result, 'bootstrap') };
  } catch (error) {
    if (is(error, 403)) return { refused: 'already-bootstrapped' };
    if (is(error, 401)) return { refused: 'token', by: 'POST /api/bootstrap' };
    throw error;
  }
}

/**
 * POST /api/bootstrap/recover for the operator's admin user (never a second
 * admin: the same username every time). The server does not revoke the
 * user's earlier keys (bootstrap-protocol.md says why); the sweep does.
 */
export async function recoverAdmin(
  client: TerdutClient,
  token: string,
  failpoint: Failpoint,
): Promise<ExchangeAnswer> {
  try {
    const result = await client.bootstrap.recover(token, operatorAdmin);
    failpoint('recover');
    return { admin: checkpointOf(result, 'recover') };
  } catch (error) {
    if (is(error, 401)) return { refused: 'token', by: 'POST /api/bootstrap/recover' };
    throw error;
  }
}
