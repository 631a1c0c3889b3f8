/**
 * Global setup of `npm test` (node --test-global-setup): starts the real peers
 * the tests need once, passes their addresses to every test file through the
 * environment, and stops them when the run ends.
 */
import { providePostgres, type RunningPostgres } from './peers/postgres.ts';

let postgres: RunningPostgres | undefined;

export async function globalSetup(): Promise<void> {
  postgres = await providePostgres();
  process.env.TERDUT_TEST_DATABASE_URL = postgres.url;
}

export async function globalTeardown(): Promise<void> {
  await postgres?.stop();
}
