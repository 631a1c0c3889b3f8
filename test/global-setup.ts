/**
 * Global setup of `npm test` (node --test-global-setup): makes sure the real
 * peers exist and passes their addresses to every test file through the
 * environment, then stops what it started when the run ends.
 *
 * - PostgreSQL: one server for the run; each test file creates its own databases.
 * - kube-apiserver, etcd, Alertmanager: built here from the Go module proxy
 *   when missing or out of date (about 12 minutes the first time on 2 cores,
 *   a no-op afterwards; TERDUT_SKIP_PEER_BUILD=1 skips the check). Each test
 *   file that needs a control plane starts its own, because the operator
 *   under test watches every namespace and must not see another file's objects.
 */
import { providePostgres, type RunningPostgres } from './peers/postgres.ts';
import { buildPeers } from './peers/peers-for-tests.ts';

let postgres: RunningPostgres | undefined;

export async function globalSetup(): Promise<void> {
  if (process.env.TERDUT_SKIP_PEER_BUILD !== '1') buildPeers();
  postgres = await providePostgres();
  process.env.TERDUT_TEST_DATABASE_URL = postgres.url;
}

export async function globalTeardown(): Promise<void> {
  await postgres?.stop();
}
