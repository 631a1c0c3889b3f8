/**
 * A real PostgreSQL for tests. CI starts Debian's server on a port of its own
 * and passes TERDUT_TEST_DATABASE_URL; without it, we start a throw-away
 * cluster in a temp dir (initdb + postgres from Debian's package) on a free
 * loopback port, and stop it again at the end.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, chmodSync, chownSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import pg from 'pg';

export interface RunningPostgres {
  /** Superuser URL of the maintenance database; tests create their own databases from it. */
  url: string;
  stop(): Promise<void>;
}

/** A free TCP port on loopback, chosen by the kernel. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
    for (const version of versions) {
      const dir = join(root, version, 'bin');
      if (existsSync(join(dir, 'initdb'))) return dir;
    }
  }
  throw new Error(
    'PostgreSQL server binaries not found under /usr/lib/postgresql; run: apt-get install -y postgresql',
  );
}

/**
 * PostgreSQL refuses to run as root, so as root we run it as the `postgres`
 * user (created by Debian's package). Spawned with uid/gid directly rather
 * than through runuser, so signals reach the server itself.
 */
function serverUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0)
    throw new Error('running as root but there is no postgres user; run: apt-get install -y postgresql');
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

export async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * Starts a temp-dir cluster with trust auth on loopback and waits until it
 * accepts connections. Tests run it with `fsync=off` (a throw-away server);
 * `durable: true` keeps PostgreSQL's default, `fsync=on`, for benchmarks
 * that measure durable commits. `selfSignedTls: true` serves TLS with a
 * certificate made just now and signed by nobody, as the Zalando operator's
 * clusters do by default (and plain connections still work); with
 * `plainRefused: true` as well, pg_hba.conf takes TCP connections over TLS
 * only (`hostssl`), and a plain one is refused with 28000 "no encryption".
 */
export async function startTemporaryPostgres(
  options: { durable?: boolean; selfSignedTls?: boolean; plainRefused?: boolean } = {},
): Promise<RunningPostgres> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'terdut-pg-'));
  chmodSync(dir, 0o777);
  const dataDir = join(dir, 'data');
  const user = serverUser();
  const init = spawnSync(
    join(bin, 'initdb'),
    ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync'],
    { encoding: 'utf8', ...user },
  );
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  if (options.plainRefused) {
    if (!options.selfSignedTls) throw new Error('plainRefused needs selfSignedTls: nothing could connect');
    writeFileSync(
      join(dataDir, 'pg_hba.conf'),
      'local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n',
    );
  }
  const port = await freePort();
  const args = ['-D', dataDir, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1'];
  args.push(
    '-c',
    `fsync=${options.durable ? 'on' : 'off'}`,
    '-c',
    'max_connections=300',
    '-c',
    'shared_buffers=128MB',
  );
  if (options.selfSignedTls) {
    const cert = join(dir, 'server.crt');
    const key = join(dir, 'server.key');
    const made = spawnSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=postgres.test'].concat([
        '-keyout',
        key,
        '-out',
        cert,
      ]),
      { encoding: 'utf8' },
    );
    if (made.status !== 0) throw new Error(`openssl could not make a certificate: ${made.stderr}`);
    // PostgreSQL refuses a key that others may read, or that is not its own.
    chmodSync(key, 0o600);
    if (user) {
      chownSync(key, user.uid, user.gid);
      chownSync(cert, user.uid, user.gid);
    }
    args.push('-c', 'ssl=on', '-c', `ssl_cert_file=${cert}`, '-c', `ssl_key_file=${key}`);
  }
  const child: ChildProcess = spawn(join(bin, 'postgres'), args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    ...user,
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const readyUrl = options.plainRefused ? `${url}?sslmode=no-verify` : url;
  const deadline = Date.now() + 30_000;
  while (!(await canConnect(readyUrl))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`temporary PostgreSQL did not start: ${stderr.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGINT'); // fast shutdown
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The PostgreSQL that tests use: TERDUT_TEST_DATABASE_URL when given (CI),
 * else a local server on the default port if one answers, else a temporary one.
 */
export async function providePostgres(): Promise<RunningPostgres> {
  const given = process.env.TERDUT_TEST_DATABASE_URL;
  if (given) {
    if (!(await canConnect(given))) {
      throw new Error(
        `TERDUT_TEST_DATABASE_URL does not answer; start PostgreSQL or unset it to use a temporary one`,
      );
    }
    return { url: given, stop: async () => {} };
  }
  return startTemporaryPostgres();
}
