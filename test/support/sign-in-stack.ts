/**
 * terdut-server listening on loopback, wired to a real OpenID Provider (the
 * OIDC test peer), for sign-in tests that walk the whole browser flow over
 * HTTP: terdut → provider login → consent → terdut callback.
 */
import { createServer } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import assert from 'node:assert/strict';
import { buildApp } from '../../packages/server/src/app.ts';
import type { Database } from '../../packages/server/src/db/database.ts';
import type { Clock } from '../../packages/server/src/clock.ts';
import { testConfig } from './app.ts';
import type { TestBrowser, Page } from './browser.ts';
import { startOidcProvider, type RunningOidcProvider, type TestPerson } from '../peers/oidc.ts';

export interface SignInStack {
  /** terdut's TERDUT_PUBLIC_URL (`http://localhost:<port>`). */
  url: string;
  app: FastifyInstance;
  idp: RunningOidcProvider;
  /** Walks the OIDC sign-in in `browser` as `person`; returns where it ended (the callback's answer or `/`). */
  /** Walks the provider's pages from `/auth/oidc/login` (plus `query`, such as `?return_to=/me`). */
  signIn(
    browser: TestBrowser,
    person: Pick<TestPerson, 'username' | 'password'>,
    query?: string,
  ): Promise<Page>;
  close(): Promise<void>;
}

/** A loopback port nobody listens on right now. */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

export async function startSignInStack(options: {
  db: Database;
  people: TestPerson[];
  env?: Record<string, string>;
  clock?: Clock;
  /** false: the provider serves profile, email and groups from userinfo only (see OidcProviderOptions). */
  claimsInIdToken?: boolean;
}): Promise<SignInStack> {
  // Listen first (port 0: no race for a port), then build terdut with the
  // URL it will be reached at, and hand it the listener's requests.
  const listener = createHttpServer();
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const url = `http://localhost:${(listener.address() as AddressInfo).port}`;
  const idp = await startOidcProvider({
    redirectUris: [`${url}/auth/oidc/callback`],
    people: options.people,
    claimsInIdToken: options.claimsInIdToken,
  });
  const config = testConfig({
    TERDUT_PUBLIC_URL: url,
    TERDUT_OIDC_ISSUER_URL: idp.issuer,
    TERDUT_OIDC_CLIENT_ID: idp.clientId,
    TERDUT_OIDC_CLIENT_SECRET: idp.clientSecret,
    ...options.env,
  });
  const app = await buildApp({ db: options.db, config, clock: options.clock });
  await app.ready();
  listener.on('request', (request, response) => app.routing(request, response));

  return {
    url,
    app,
    idp,
    async signIn(browser, person, query = '') {
      const login = await browser.get(`${url}/auth/oidc/login${query}`);
      // A browser that still has a session and grant at the provider comes straight back.
      if (login.url.startsWith(url)) return login;
      assert.equal(
        login.status,
        200,
        `expected the provider's login form, got ${login.status} at ${login.url}: ${login.text}`,
      );
      const afterLogin = await browser.submitFirstForm(login, {
        username: person.username,
        password: person.password,
      });
      if (afterLogin.url.startsWith(url)) return afterLogin;
      assert.match(
        afterLogin.text,
        /Allow/,
        `expected the consent page at ${afterLogin.url}: ${afterLogin.text}`,
      );
      return browser.submitFirstForm(afterLogin, {});
    },
    async close() {
      listener.closeAllConnections();
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      await app.close();
      await idp.stop();
    },
  };
}

/** The page ended at terdut's callback (a refusal) rather than at `/` (signed in)? */
export function endedAtCallback(page: Page, stack: SignInStack): boolean {
  return page.url.startsWith(`${stack.url}/auth/oidc/callback`);
}
