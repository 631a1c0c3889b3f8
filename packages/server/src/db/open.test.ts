import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../config.ts';
import { openConfiguredDatabase } from './open.ts';
import { LOCK_FILE } from './data-dir-lock.ts';

/** PostgreSQL settings of an embedded database opened as the server would open it with `env`. */
async function settingsOfEmbedded(
  env: Record<string, string>,
  names: string[],
): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), 'terdut-embedded-'));
  try {
    const { db } = await openConfiguredDatabase(loadConfig({ TERDUT_DATA_DIR: dir, ...env }));
    try {
      const settings: Record<string, string> = {};
      for (const name of names) {
        settings[name] = (await db.query<Record<string, string>>(`SHOW ${name}`)).rows[0]![name]!;
      }
      return settings;
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sharedBuffersOfEmbedded = async (env: Record<string, string>) =>
  (await settingsOfEmbedded(env, ['shared_buffers'])).shared_buffers;

test('the embedded database keeps 16MB of shared buffers unless TERDUT_EMBEDDED_SHARED_BUFFERS says otherwise', async () => {
  assert.equal(await sharedBuffersOfEmbedded({}), '16MB');
  assert.equal(await sharedBuffersOfEmbedded({ TERDUT_EMBEDDED_SHARED_BUFFERS: '64MB' }), '64MB');
});

test('the embedded database bounds what one VACUUM or ANALYZE takes (its memory is never given back)', async () => {
  assert.deepEqual(await settingsOfEmbedded({}, ['maintenance_work_mem', 'default_statistics_target']), {
    maintenance_work_mem: '8MB',
    default_statistics_target: '10',
  });
});

test('a TERDUT_EMBEDDED_SHARED_BUFFERS that is not a size stops start-up with a message naming it', () => {
  for (const value of ['lots', '32', '32mb', '0MB', '-1MB', '32MB; DROP']) {
    assert.throws(
      () => loadConfig({ TERDUT_EMBEDDED_SHARED_BUFFERS: value }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.includes(`TERDUT_EMBEDDED_SHARED_BUFFERS="${value}" is not a size`),
    );
  }
});

test('a TERDUT_EMBEDDED_SHARED_BUFFERS the embedded database cannot start with is refused naming it, not the data directory', () => {
  for (const value of ['64kB', '2GB', '100GB']) {
    assert.throws(
      () => loadConfig({ TERDUT_EMBEDDED_SHARED_BUFFERS: value }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.includes(`TERDUT_EMBEDDED_SHARED_BUFFERS="${value}" is out of range`),
    );
  }
  for (const value of ['128kB', '1GB', '1536MB']) {
    assert.doesNotThrow(() => loadConfig({ TERDUT_EMBEDDED_SHARED_BUFFERS: value }));
  }
});

test('a second process cannot open the embedded data directory of a running server; one left by a crash is taken over', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'terdut-embedded-'));
  // A stand-in for a running terdut-server: a live process whose command line names it.
  const server = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', 'terdut-server-standin'], {
    stdio: 'ignore',
  });
  try {
    writeFileSync(join(dir, LOCK_FILE), `${server.pid}\n`);
    await assert.rejects(
      openConfiguredDatabase(loadConfig({ TERDUT_DATA_DIR: dir })),
      new RegExp(`in use by terdut-server \\(process ${server.pid}\\); stop that server first`),
    );
    assert.ok(!existsSync(join(dir, 'PG_VERSION')), 'nothing was written into the directory');

    server.kill();
    await once(server, 'exit');
    const { db } = await openConfiguredDatabase(loadConfig({ TERDUT_DATA_DIR: dir }));
    assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8').trim(), String(process.pid));
    await db.close();
    assert.ok(!existsSync(join(dir, LOCK_FILE)), 'closing gives the directory back');
  } finally {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a data directory the embedded database may not write stops start-up with a message saying so', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'terdut-embedded-'));
  try {
    // Not writable: as a non-root user the lock file fails first; as root
    // (a container's default) PGlite's own file system refuses instead.
    chmodSync(dir, 0o555);
    await assert.rejects(openConfiguredDatabase(loadConfig({ TERDUT_DATA_DIR: dir })), (error: Error) => {
      assert.match(error.message, /^cannot open the embedded database in .*\(EACCES: permission denied/);
      assert.doesNotMatch(error.message, /undefined/);
      return true;
    });
  } finally {
    chmodSync(dir, 0o755);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a data directory holding other files and no database works, with a warning naming them; lost+found and its own files are no reason', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'terdut-embedded-'));
  const other = mkdtempSync(join(tmpdir(), 'terdut-embedded-'));
  try {
    writeFileSync(join(dir, 'notes.txt'), 'my notes\n');
    const first = await openConfiguredDatabase(loadConfig({ TERDUT_DATA_DIR: dir }));
    await first.db.close();
    assert.equal(first.warnings.length, 1);
    assert.match(first.warnings[0]!, /held other files \(notes\.txt\) when the embedded database was made/);
    assert.equal(readFileSync(join(dir, 'notes.txt'), 'utf8'), 'my notes\n', 'the file is left as it was');
    // Once the database is there, its own files are no reason to warn.
    const again = await openConfiguredDatabase(loadConfig({ TERDUT_DATA_DIR: dir }));
    await again.db.close();
    assert.deepEqual(again.warnings, []);

    mkdirSync(join(other, 'lost+found'));
    const volume = await openConfiguredDatabase(loadConfig({ TERDUT_DATA_DIR: other }));
    await volume.db.close();
    assert.deepEqual(volume.warnings, [], 'a fresh volume with lost+found');
    assert.ok(existsSync(join(other, 'PG_VERSION')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  }
});

test('a DATABASE_URL whose password holds a # is refused saying to percent-encode it, without echoing it', async () => {
  const config = loadConfig({ DATABASE_URL: 'postgres://terdut:pa#ss/w0rd@127.0.0.1:5432/terdut' });
  await assert.rejects(openConfiguredDatabase(config), (error: Error) => {
    assert.match(
      error.message,
      /^DATABASE_URL is not a URL that can be read; percent-encode special characters/,
    );
    assert.match(error.message, /# as %23/);
    assert.doesNotMatch(error.message, /pa#ss|w0rd|not reachable/);
    return true;
  });
});
