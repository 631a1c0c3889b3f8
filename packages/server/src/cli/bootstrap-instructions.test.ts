import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bootstrapInstructions } from './bootstrap-instructions.ts';
import { startServe, createTestPostgres } from '@terdut/test-support';

describe('bootstrap instructions text', () => {
  test('a generated token is shown in a ready-to-paste curl line', () => {
    const token = 'a'.repeat(64);
    const text = bootstrapInstructions('http://localhost:8080/', { origin: 'generated', generated: token });
    assert.match(text, /curl -sS -X POST http:\/\/localhost:8080\/api\/bootstrap/);
    assert.ok(text.includes(`-H 'Authorization: Bearer ${token}'`));
    assert.match(text, /-d '\{"username":"admin","email":"admin@example.com"\}'/);
  });

  test('a configured token is referenced, never printed', () => {
    const fromFile = bootstrapInstructions('http://x', { origin: 'file', path: '/run/secrets/token' });
    assert.ok(fromFile.includes('"Authorization: Bearer $(cat /run/secrets/token)"'));
    const fromEnv = bootstrapInstructions('http://x', { origin: 'environment' });
    assert.ok(fromEnv.includes('"Authorization: Bearer $TERDUT_BOOTSTRAP_TOKEN"'));
  });

  test("a token file's path with a space or a quote still reads the token when the line is pasted", async () => {
    const dir = await mkdtemp(join(tmpdir(), "terdut token's dir "));
    try {
      const path = join(dir, 'token file');
      await writeFile(path, 'c'.repeat(64));
      const text = bootstrapInstructions('http://x', { origin: 'file', path });
      const header = /-H ("Authorization: Bearer \$\(cat .*\)") \\\n/.exec(text)?.[1];
      assert.ok(header, text);
      // What the shell makes of the pasted header argument.
      const word = execFileSync('sh', ['-c', `printf %s ${header}`], { encoding: 'utf8' });
      assert.equal(word, `Authorization: Bearer ${'c'.repeat(64)}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('terdut-server serve on a fresh install', () => {
  let dataDir: string;
  before(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'terdut-serve-'));
  });
  after(() => rm(dataDir, { recursive: true, force: true }));
  const env = () => ({ TERDUT_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1' });

  test('prints the generated token once with a curl line that works; a bootstrapped restart prints none', async () => {
    const server = startServe(env());
    let token: string;
    try {
      const [, url, printed] = await server.waitFor(
        /curl -sS -X POST (http:\/\/\S+\/api\/bootstrap) \\\n\s+-H 'Authorization: Bearer ([0-9a-f]{64})'/,
      );
      token = printed!;
      const response = await fetch(url!, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', email: 'admin@example.com' }),
      });
      assert.equal(response.status, 201);
      const body = (await response.json()) as { api_key: { key: string } };
      assert.match(body.api_key.key, /^[0-9a-f]{64}$/);
      assert.ok(!server.output().includes(body.api_key.key), 'the admin key is never logged');
    } finally {
      await server.stop();
    }
    assert.equal(
      server.output().split(token).length,
      2,
      'the token appears exactly once in the whole output',
    );

    const restarted = startServe(env());
    try {
      await restarted.waitFor(/listening on/);
      // Give the post-listen bootstrap check time to print, were it going to.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.doesNotMatch(restarted.output(), /not been bootstrapped|Authorization: Bearer/);
    } finally {
      await restarted.stop();
    }
  });

  test('a TERDUT_BOOTSTRAP_TOKEN_FILE that cannot be read is named at start-up, with the 503 it causes', async () => {
    const database = await createTestPostgres();
    const missing = join(dataDir, 'no-such-token');
    const server = startServe({
      DATABASE_URL: database.url,
      PORT: '0',
      HOST: '127.0.0.1',
      TERDUT_BOOTSTRAP_TOKEN_FILE: missing,
    });
    try {
      await server.waitFor(
        new RegExp(
          `the bootstrap token file ${missing} cannot be read \\(ENOENT\\); check TERDUT_BOOTSTRAP_TOKEN_FILE ` +
            'and the mounted Secret; POST /api/bootstrap answers 503 until it can be read',
        ),
        60_000,
      );
    } finally {
      await server.stop();
      await database.drop();
    }
  });

  test('with TERDUT_BOOTSTRAP_TOKEN set, the hint names the variable and not its value', async () => {
    // On PostgreSQL: the same start-up path, without a second embedded database to boot.
    const database = await createTestPostgres();
    const secret = 'b'.repeat(64);
    const server = startServe({
      DATABASE_URL: database.url,
      PORT: '0',
      HOST: '127.0.0.1',
      TERDUT_BOOTSTRAP_TOKEN: secret,
    });
    try {
      await server.waitFor(/Bearer \$TERDUT_BOOTSTRAP_TOKEN/);
      assert.ok(!server.output().includes(secret));
    } finally {
      await server.stop();
      await database.drop();
    }
  });
});
