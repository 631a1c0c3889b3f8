/**
 * DATABASE_URL's `sslmode` means what it means to libpq, against a real
 * PostgreSQL serving TLS with a self-signed certificate (as a Zalando cluster
 * does): `require` encrypts and connects, `verify-full` checks the
 * certificate and refuses one nobody signed, `prefer` and `allow` fall back
 * as libpq's do (to a plain connection where the server has no TLS, to TLS
 * where it takes nothing else).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { providePostgres, startTemporaryPostgres, type RunningPostgres } from '../peers/postgres.ts';
import { openPostgres } from '../../packages/server/src/db/database.ts';
import { ChildProcessGroup } from '../peers/child-processes.ts';
import { runMain, startServerProcess } from '../support/server-process.ts';

const PASSWORD = 'not-checked-but-secret-7f3a';
let postgres: RunningPostgres;
let plainOnly: RunningPostgres;
let tlsOnly: RunningPostgres;
const processes = new ChildProcessGroup();

before(async () => {
  // Each kept as soon as it runs, so that `after` stops it whatever else failed.
  await Promise.all([
    startTemporaryPostgres({ selfSignedTls: true }).then((started) => (postgres = started)),
    providePostgres().then((started) => (plainOnly = started)),
    startTemporaryPostgres({ selfSignedTls: true, plainRefused: true }).then(
      (started) => (tlsOnly = started),
    ),
  ]);
});
after(async () => {
  await processes.stop();
  await Promise.all([postgres?.stop(), plainOnly?.stop(), tlsOnly?.stop()]);
});

/** The temporary server's URL with a password (trust auth ignores it) and an sslmode. */
function urlWith(sslmode: string, server: RunningPostgres = postgres): string {
  const url = new URL(server.url);
  url.password = PASSWORD;
  url.searchParams.set('sslmode', sslmode);
  return url.toString();
}

test('sslmode=require connects over TLS to a server whose certificate is self-signed, without a warning', async () => {
  // `require` fails outright on a server without TLS ("does not support SSL
  // connections"), so getting through proves the connection is encrypted.
  const result = await runMain(['migrate'], { DATABASE_URL: urlWith('require') });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stdout, /applied \d+ migration/);
  assert.doesNotMatch(result.stderr, /SECURITY WARNING/);

  // node-postgres's own mode, which libpq does not have, keeps working.
  const noVerify = await runMain(['migrate'], { DATABASE_URL: urlWith('no-verify') });
  assert.equal(noVerify.code, 0, noVerify.stderr);

  const server = await startServerProcess({ processes, databaseUrl: urlWith('require') });
  const ready = await fetch(`${server.url}/readyz`);
  assert.equal(ready.status, 200);
});

test('sslmode=verify-full still refuses a certificate nobody signed, naming DATABASE_URL and not its password', async () => {
  const result = await runMain(['migrate'], { DATABASE_URL: urlWith('verify-full') });
  assert.equal(result.code, 1, result.stdout);
  assert.match(
    result.stderr,
    /database is not reachable at 127\.0\.0\.1:\d+\/postgres \(.*certificate.*\); check DATABASE_URL/,
  );
  assert.ok(!result.stderr.includes(PASSWORD) && !result.stdout.includes(PASSWORD), result.stderr);
});

/** Whether the server's connections, opened as terdut-server opens them, are encrypted. */
async function encryptedWith(sslmode: string, server: RunningPostgres): Promise<boolean> {
  const db = await openPostgres(urlWith(sslmode, server), { max: 2 });
  try {
    const { rows } = await db.query<{ ssl: boolean }>(
      'SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()',
    );
    return rows[0]!.ssl;
  } finally {
    await db.close();
  }
}

test("sslmode=prefer (libpq's default) encrypts where the server has TLS and connects in plain where it has none", async () => {
  assert.equal(await encryptedWith('prefer', postgres), true);
  // node-postgres alone refuses: "The server does not support SSL connections".
  assert.equal(await encryptedWith('prefer', plainOnly), false);
  // The server and its CLI start with it too.
  const result = await runMain(['migrate'], { DATABASE_URL: urlWith('prefer', plainOnly) });
  assert.equal(result.code, 0, result.stderr);
});

test('sslmode=allow connects in plain where the server takes it and over TLS where it takes nothing else', async () => {
  assert.equal(await encryptedWith('allow', postgres), false);
  // node-postgres alone is refused: "no pg_hba.conf entry … no encryption".
  assert.equal(await encryptedWith('allow', tlsOnly), true);
  // A server that takes TLS only still refuses a plain connection outright.
  await assert.rejects(openPostgres(urlWith('disable', tlsOnly)), /no encryption.*check DATABASE_URL/s);
});
