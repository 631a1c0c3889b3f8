/**
 * What the image and `npm start` run: packages/server/bin/terdut-server, the
 * server built into JavaScript (packages/server/build.ts). It must be the
 * whole server, migrations and web app included, without loading one
 * TypeScript file: with Node's type stripper turned off, any .ts import
 * would fail to load, and the ~18 MiB the build saves would quietly come back.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { repoRoot, ChildProcessGroup } from '../peers/child-processes.ts';
import { startServerProcess, type RunningServer } from '../support/server-process.ts';
import { buildWebApp } from '../../packages/web/build.ts';
import { openPglite } from '../../packages/server/src/db/database.ts';

const BIN = join(repoRoot, 'packages/server/bin/terdut-server');
const WITHOUT_TYPESCRIPT = { NODE_OPTIONS: '--no-experimental-strip-types' };

const processes = new ChildProcessGroup();
let server: RunningServer;

before(async () => {
  await buildWebApp({ ifStale: true });
  // bin/terdut-server builds the server itself when a source changed. The embedded database: the migrations come from dist, and PGlite loads its WebAssembly.
  server = await startServerProcess({ processes, command: [BIN], env: WITHOUT_TYPESCRIPT });
});

after(async () => {
  await server?.stop();
  await processes.stop();
});

test('bin/terdut-server --version prints the release without loading TypeScript', () => {
  const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string })
    .version;
  const printed = execFileSync(BIN, ['--version'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...WITHOUT_TYPESCRIPT },
  }).trim();
  assert.equal(printed, version);
});

test("bin/terdut-server in a checkout runs on the project's Node, whatever Node the shell finds first", () => {
  // The operating docs start it directly (not through npm); a PATH of the
  // system's directories alone finds no Node, or the machine's older one.
  const printed = execFileSync(BIN, ['--version'], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin' },
  }).trim();
  assert.match(printed, /^\d+\.\d+\.\d+/);
});

test('bin/terdut-server migrate --help prints the help and leaves the database alone; an unknown argument is refused', () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'terdut-built-args-')), 'data');
  try {
    const run = (args: string[]) =>
      spawnSync(BIN, args, {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', TERDUT_DATA_DIR: dataDir, ...WITHOUT_TYPESCRIPT },
      });
    const help = run(['migrate', '--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /Usage:/);
    assert.equal(existsSync(dataDir), false, 'migrate --help opened the database');

    const unknown = run(['serve', '--port', '9090']);
    assert.equal(unknown.status, 2, unknown.stdout);
    assert.match(unknown.stderr, /serve takes no arguments, got "--port 9090"/);
    assert.equal(existsSync(dataDir), false, 'serve --port 9090 opened the database');
  } finally {
    rmSync(dirname(dataDir), { recursive: true, force: true });
  }
});

test('bin/terdut-server exits 1 naming PORT when its port is taken, instead of running on serving nothing', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'terdut-built-port-taken-'));
  try {
    const second = spawnSync(BIN, [], {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        PATH: process.env.PATH ?? '',
        TERDUT_DATA_DIR: dataDir,
        PORT: new URL(server.url).port,
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...WITHOUT_TYPESCRIPT,
      },
    });
    assert.equal(second.signal, null, 'still running after 60 s');
    assert.equal(second.status, 1, second.stderr);
    assert.match(second.stderr, /cannot listen on 127\.0\.0\.1:\d+ \(EADDRINUSE\); check HOST and PORT/);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('bin/terdut-server caps the heap at 512 MiB, and TERDUT_NODE_FLAGS overrides its flags', () => {
  // A module loaded first (--import) prints the heap limit V8 was given, in MiB.
  const printLimit =
    '--import=data:text/javascript,import(%22node:v8%22).then((v8)=>console.log(%22heap%22,Math.round(v8.getHeapStatistics().heap_size_limit/1048576)))';
  const heapLimitMiB = (flags: string) => {
    const output = execFileSync(BIN, ['--version'], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', TERDUT_NODE_FLAGS: flags },
    });
    return Number(/heap (\d+)/.exec(output)?.[1]);
  };
  // The limit V8 reports adds the young generation (semi-spaces of 4 MiB, and some) to the old.
  const shipped = heapLimitMiB(printLimit);
  assert.ok(shipped >= 512 && shipped < 768, `heap limit ${shipped} MiB`);
  const raised = heapLimitMiB(`--max-old-space-size=2048 ${printLimit}`);
  assert.ok(raised >= 2048 && raised < 2560, `heap limit ${raised} MiB`);
});

test('bin/terdut-server refuses a TERDUT_NODE_FLAGS that Node refuses, naming the variable, with exit code 2', () => {
  const run = spawnSync(BIN, ['--version'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', TERDUT_NODE_FLAGS: '--max-old-space-size=1024 --no-such-flag' },
  });
  assert.equal(run.status, 2, run.stderr);
  assert.match(
    run.stderr,
    /^terdut-server: configuration error: TERDUT_NODE_FLAGS="--max-old-space-size=1024 --no-such-flag" holds a flag Node refuses \(.*bad option: --no-such-flag\); correct it or unset it/m,
  );
  assert.equal(run.stdout, '');
});

test("bin/terdut-server sets glibc's allocator for a small resident set, unless the environment says otherwise", () => {
  const environ = (pid: number) =>
    new Map(
      readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
    );
  const running = environ(server.pid);
  assert.equal(running.get('MALLOC_ARENA_MAX'), '2');
  // 32 KiB: V8's compiler memory (zone segments of at most 32 KiB) is mapped and unmapped whole.
  assert.equal(running.get('MALLOC_MMAP_THRESHOLD_'), '32768');
  const printArenas =
    '--import=data:text/javascript,console.log(%22arenas%22,process.env.MALLOC_ARENA_MAX,process.env.MALLOC_MMAP_THRESHOLD_)';
  const output = execFileSync(BIN, ['--version'], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', TERDUT_NODE_FLAGS: printArenas, MALLOC_ARENA_MAX: '4' },
  });
  assert.match(output, /arenas 4 32768/);
});

/**
 * Node flags that make a process print every module it resolves, one
 * `resolved <url>` line each on stderr: a module loaded first (--import)
 * registers a resolve hook, which runs on the loader's own thread and so
 * writes synchronously.
 */
function printResolvedModulesFlag(): string {
  const hooks =
    "import { writeSync } from 'node:fs';" +
    'export async function resolve(specifier, context, next) {' +
    '  const resolved = await next(specifier, context);' +
    "  writeSync(2, 'resolved ' + resolved.url + '\\n');" +
    '  return resolved;' +
    '}';
  const register = `import { register } from 'node:module'; register(${JSON.stringify(
    `data:text/javascript,${encodeURIComponent(hooks)}`,
  )});`;
  return `--import=data:text/javascript,${encodeURIComponent(register)}`;
}

test('the built server loads TypeBox as one bundled file, and no mailer while SMTP is not configured', () => {
  // Both cost resident memory for good (bench/README.md, "Memory"): TypeBox's
  // ~370 modules one by one about 6 MiB more than the bundle, nodemailer and
  // the fetch its modules pull in about 5 MiB.
  const run = spawnSync(BIN, ['--version'], {
    encoding: 'utf8',
    env: {
      PATH: process.env.PATH ?? '',
      TERDUT_NODE_FLAGS: printResolvedModulesFlag(),
      ...WITHOUT_TYPESCRIPT,
    },
  });
  assert.equal(run.status, 0, run.stderr);
  const resolved = run.stderr
    .split('\n')
    .filter((line) => line.startsWith('resolved '))
    .map((line) => line.slice('resolved '.length));
  assert.ok(
    resolved.some((url) => url.endsWith('/packages/contract/dist/vendor/typebox.js')),
    `the bundle was not loaded; resolved:\n${resolved.join('\n')}`,
  );
  assert.deepEqual(
    resolved.filter((url) => /\/node_modules\/(typebox|nodemailer)\//.test(url)),
    [],
  );
});

test('bin/terdut-server migrate applies every migration, read from dist, to the embedded database', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'terdut-built-migrate-'));
  try {
    execFileSync(BIN, ['migrate'], {
      encoding: 'utf8',
      env: {
        PATH: process.env.PATH ?? '',
        TERDUT_DATA_DIR: dataDir,
        LOG_LEVEL: 'warn',
        ...WITHOUT_TYPESCRIPT,
      },
    });
    const db = await openPglite(dataDir);
    try {
      const applied = (await db.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY name'))
        .rows;
      const sources = readdirSync(join(repoRoot, 'packages/server/src/db/migrations'))
        .filter((name) => name.endsWith('.sql'))
        .sort();
      assert.deepEqual(
        applied.map((row) => row.name),
        sources,
      );
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the built server answers the API: bootstrap state public, the webhook wants an API key', async () => {
  const bootstrap = await fetch(`${server.url}/api/bootstrap`);
  assert.equal(bootstrap.status, 200, await bootstrap.clone().text());
  const webhook = await fetch(`${server.url}/api/webhook/alertmanager`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.equal(webhook.status, 401, await webhook.text());
});

test('the built server serves the web app and its assets', async () => {
  const page = await fetch(`${server.url}/`);
  assert.equal(page.status, 200);
  const html = await page.text();
  const script = /src="(\/assets\/app-[^"]+\.js)"/.exec(html)?.[1];
  assert.ok(script, `no app script in:\n${html}`);
  const asset = await fetch(`${server.url}${script}`);
  assert.equal(asset.status, 200);
  assert.match(asset.headers.get('content-type') ?? '', /javascript/);
});
