/**
 * An in-process terdut-server for HTTP tests (`app.inject`, no network), with
 * helpers to make users and keys directly in the database, so a test can
 * start from "an admin exists" without going through bootstrap.
 */
import type { FastifyInstance, InjectOptions } from 'fastify';
import { buildApp } from '../../packages/server/src/app.ts';
import { loadConfig, type Config } from '../../packages/server/src/config.ts';
import type { Database } from '../../packages/server/src/db/database.ts';
import type { Clock } from '../../packages/server/src/clock.ts';
import { insertUserWithKey, type TestUser } from './users.ts';
import { TEST_BOOTSTRAP_TOKEN } from './server-process.ts';

export type { TestUser } from './users.ts';

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  #now: number;
  constructor(start: Date | string = '2026-07-27T10:00:00Z') {
    this.#now = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#now);
  }
  advance(ms: number): void {
    this.#now += ms;
  }
  set(to: Date | string): void {
    this.#now = new Date(to).getTime();
  }
}

/** Configuration as the server would load it from `env`, with test-friendly defaults. */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ TERDUT_BOOTSTRAP_TOKEN: TEST_BOOTSTRAP_TOKEN, ...env });
}

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  config: Config;
  /** Inserts a person with an API key directly in the database. */
  createUser(username: string, role?: 'admin' | 'member'): Promise<TestUser>;
  /** `app.inject` with `Authorization: Bearer <key>` when `as` is given; parses JSON bodies. */
  request(
    options: InjectOptions & { as?: TestUser | string },
  ): Promise<{ status: number; body: any; headers: Record<string, unknown> }>;
  close(): Promise<void>;
}

export async function startTestApp(
  db: Database,
  /** `webDir`: the built web app to serve (default: the checkout's build, which may not exist yet). */
  options: { config?: Config; clock?: Clock; webDir?: string } = {},
): Promise<TestApp> {
  const config = options.config ?? testConfig();
  const app = await buildApp({ db, config, clock: options.clock, webDir: options.webDir });
  await app.ready();
  return {
    app,
    db,
    config,
    createUser: (username, role = 'member') => insertUserWithKey(db, { username, role }),
    async request({ as, ...inject }) {
      const headers = { ...(inject.headers ?? {}) } as Record<string, string>;
      if (as !== undefined) headers.authorization = `Bearer ${typeof as === 'string' ? as : as.key}`;
      const response = await app.inject({ ...inject, headers });
      const type = String(response.headers['content-type'] ?? '');
      return {
        status: response.statusCode,
        body: type.includes('json') && response.body.length > 0 ? response.json() : response.body,
        headers: response.headers,
      };
    },
    close: () => app.close(),
  };
}
