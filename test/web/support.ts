/**
 * Browser tests of the web app: Debian's Chromium driven by playwright-core
 * (the automation packages cannot download browsers here), against real
 * terdut-server processes on PGlite or PostgreSQL.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { buildWebApp } from '../../packages/web/build.ts';
import { ChildProcessGroup, freeLoopbackPort, repoRoot, waitUntil } from '../peers/child-processes.ts';
import { createTestPostgres, type DatabaseKind } from '../support/databases.ts';

export const CHROMIUM = process.env.TERDUT_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots of every page, desktop and phone; git-ignored. */
export const SCREENSHOT_DIR = join(repoRoot, 'test/web/screenshots');
export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 800 };
export const ADMIN_PASSWORD = 'admin-password-0123';
export const MEMBER_PASSWORD = 'member-password-0123';
const BOOTSTRAP_TOKEN = 'web-app-test-bootstrap-token-0123456789abcdef012345';

/** One Chromium per test file; contexts separate the people in it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set TERDUT_CHROMIUM)`);
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
}

export interface WebStack {
  kind: DatabaseKind;
  /** The first replica, `http://127.0.0.1:<port>`. */
  url: string;
  /** Every replica (two on PostgreSQL, sharing the database; one on PGlite). */
  urls: string[];
  admin: { id: number; key: string };
  member: { id: number; key: string };
  /** An API call with `key` (the admin's by default); the parsed JSON answer and status. */
  api(method: string, path: string, body?: unknown, key?: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * Builds the web app (when stale), starts terdut-server (two replicas on
 * PostgreSQL), bootstraps it and creates `admin` and `mia` (a member) with
 * passwords.
 */
export async function startWebStack(
  kind: DatabaseKind,
  options: {
    beforeBootstrap?: (url: string) => Promise<void>;
    /** More environment for the server processes (TERDUT_NTFY_URL, …). */
    env?: Record<string, string>;
    /** TERDUT_PUBLIC_URL is the replica's own URL (so pages carry links and Acknowledge); one replica only. */
    publicUrl?: boolean;
  } = {},
): Promise<WebStack> {
  await buildWebApp({ ifStale: true });
  const processes = new ChildProcessGroup();
  const dirs: string[] = [];
  let drop: (() => Promise<void>) | undefined;
  let databaseEnv: Record<string, string> = {};
  if (kind === 'postgres') {
    const database = await createTestPostgres();
    await database.db.close();
    drop = () => database.drop();
    databaseEnv = { DATABASE_URL: database.url };
  } else {
    const dataDir = mkdtempSync(join(tmpdir(), 'terdut-web-pglite-'));
    dirs.push(dataDir);
    databaseEnv = { TERDUT_DATA_DIR: dataDir };
  }
  const startReplica = async (): Promise<string> => {
    const port = await freeLoopbackPort();
    const dir = mkdtempSync(join(tmpdir(), 'terdut-web-'));
    dirs.push(dir);
    const child = processes.spawn({
      name: `terdut-server :${port}`,
      command: process.execPath,
      args: [join(repoRoot, 'packages/server/src/main.ts'), 'serve'],
      cwd: dir,
      logPath: join(dir, 'server.log'),
      env: {
        PATH: process.env.PATH,
        PORT: String(port),
        HOST: '127.0.0.1',
        TERDUT_BOOTSTRAP_TOKEN: BOOTSTRAP_TOKEN,
        TERDUT_TIMEZONE: 'Europe/Berlin',
        LOG_LEVEL: 'warn',
        ...databaseEnv,
        ...(options.publicUrl ? { TERDUT_PUBLIC_URL: `http://127.0.0.1:${port}` } : {}),
        ...options.env,
      },
    });
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(async () => (await fetch(`${url}/readyz`)).status === 200, {
      timeoutMs: 120_000,
      intervalMs: 250,
      child,
      describe: () => `terdut-server did not become ready at ${url}/readyz`,
    });
    return url;
  };
  const urls = [await startReplica()];
  // Two replicas have two URLs, and a public URL names one server.
  if (kind === 'postgres' && !options.publicUrl) urls.push(await startReplica());
  const url = urls[0]!;

  const call = async (method: string, path: string, body?: unknown, key?: string) => {
    const response = await fetch(url + path, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed: any = text ? JSON.parse(text) : undefined;
    return { status: response.status, body: parsed };
  };
  await options.beforeBootstrap?.(url);
  const boot = await call(
    'POST',
    '/api/bootstrap',
    { username: 'admin', email: 'admin@example.com' },
    BOOTSTRAP_TOKEN,
  );
  assert.equal(boot.status, 201, JSON.stringify(boot.body));
  const admin = { id: boot.body.user.id as number, key: boot.body.api_key.key as string };
  assert.equal(
    (await call('PUT', `/api/users/${admin.id}/password`, { password: ADMIN_PASSWORD }, admin.key)).status,
    204,
  );
  const created = await call('POST', '/api/users', { username: 'mia', email: 'mia@example.com' }, admin.key);
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(
    (await call('PUT', `/api/users/${created.body.id}/password`, { password: MEMBER_PASSWORD }, admin.key))
      .status,
    204,
  );
  const memberKey = await call(
    'POST',
    `/api/users/${created.body.id}/api-keys`,
    { name: 'mia-test' },
    admin.key,
  );
  const member = { id: created.body.id as number, key: memberKey.body.key as string };

  return {
    kind,
    url,
    urls,
    admin,
    member,
    api: (method, path, body, key) => call(method, path, body, key ?? admin.key),
    async close() {
      await processes.stop();
      await drop?.();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Signs in on the sign-in page with a password and waits for the incident queue. */
export async function signIn(page: Page, url: string, username: string, password: string): Promise<void> {
  await page.goto(url + '/');
  await page.getByLabel('Username', { exact: true }).fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Incidents' }).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe-core in the page and fails on any serious or critical violation.
 * axe is evaluated through the DevTools protocol, which the page's CSP (no
 * inline script) does not block, so the page is tested with its real CSP.
 */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations;
  });
  const bad = violations.filter(
    (violation) => violation.impact === 'serious' || violation.impact === 'critical',
  );
  assert.deepEqual(
    bad.map(
      (violation) =>
        `${violation.impact} ${violation.id}: ${violation.help} at ${violation.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    ),
    [],
    `axe found serious or critical problems on ${what}`,
  );
}

/** Saves a screenshot as test/web/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/**
 * Fails when the page scrolls sideways at the phone's width, and at half of it: the phone zoomed to
 * 200 % (WCAG 1.4.10), 195 CSS px on a 390 px phone. The layout viewport's width is compared, not
 * `innerWidth`: on a mobile viewport the browser zooms out to fit content wider than the screen, and
 * `innerWidth` grows with it.
 */
export async function assertNoHorizontalScroll(page: Page, what: string): Promise<void> {
  const check = async (how: string) => {
    const { scrollWidth, clientWidth } = await page.evaluate(() => {
      const root = (globalThis as unknown as { document: { documentElement: HTMLElementLike } }).document
        .documentElement;
      return { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth };
    });
    assert.ok(
      scrollWidth <= clientWidth,
      `${what} scrolls sideways ${how}: ${scrollWidth} px > ${clientWidth} px`,
    );
  };
  await check('on a phone');
  const size = page.viewportSize();
  if (size === null) return;
  await page.setViewportSize({ width: Math.floor(size.width / 2), height: Math.floor(size.height / 2) });
  try {
    await check('on a phone zoomed to 200 %');
  } finally {
    await page.setViewportSize(size);
  }
}

interface HTMLElementLike {
  scrollWidth: number;
  clientWidth: number;
}
