/**
 * DATABASE_URL's `sslmode` means what it means to libpq, against a real
 * PostgreSQL serving TLS with a self-signed certificate (as a Zalando cluster
 * does): `require` encrypts and connects, `verify-full` checks the
 * certificate and refuses one nobody signed.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTemporaryPostgres, type RunningPostgres } from '../peers/postgres.ts';
import { ChildProcessGroup } from '../peers/child-processes.ts';
import { runMain, startServerProcess } from '../support/server-process.ts';

const PASSWORD = 'not-checked-but-secret-7f3a';
let postgres: RunningPostgres;
const processes = new ChildProcessGroup();

before(async () => {
  postgres = await startTemporaryPostgres({ selfSignedTls: true });
});
after(async () => {
  await processes.stop();
  await postgres?.stop();
});

/** The temporary server's URL with a password (trust auth ignores it) and an sslmode. */
function urlWith(sslmode: string): string {
  const url = new URL(postgres.url);
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
