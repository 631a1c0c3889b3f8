/**
 * Alerta (PyPI `alerta-server`), the peer terdut's intake is measured
 * against: its Prometheus/Alertmanager webhook, served by gunicorn as Alerta's
 * documentation deploys it, on a PostgreSQL database of its own.
 *
 * Installed on first use into a Python venv (TERDUT_BENCH_VENV, default
 * `.bench-venv` in the checkout, gitignored) from wheels only, at the pinned
 * versions below; a venv with other versions is brought to these. Runs as a
 * child process group that dies with the benchmark (ChildProcessGroup's
 * watchdog), whatever way the benchmark ends.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChildProcessGroup,
  freeLoopbackPort,
  logTail,
  repoRoot,
  waitUntil,
} from '../../test/peers/child-processes.ts';
import type { SendNotification } from './intake-load.ts';
import { JsonHttp } from './json-http.ts';

/** PyPI pins: alerta-server's newest release, and what it runs on. */
export const ALERTA_PACKAGES = {
  'alerta-server': '9.1.0',
  gunicorn: '27.0.1',
  'psycopg2-binary': '2.9.13',
} as const;

const venv = process.env.TERDUT_BENCH_VENV ?? join(repoRoot, '.bench-venv');

/** The venv's `bin` directory with the pinned packages installed (installs them when missing or different). */
export function ensureAlertaVenv(): string {
  const bin = join(venv, 'bin');
  const wanted = Object.entries(ALERTA_PACKAGES).map(([name, version]) => `${name}==${version}`);
  const probe = spawnSync(
    join(bin, 'python'),
    [
      '-c',
      'import sys, importlib.metadata as m; print(" ".join(f"{n}=={m.version(n)}" for n in sys.argv[1:]))',
      ...Object.keys(ALERTA_PACKAGES),
    ],
    { encoding: 'utf8' },
  );
  if (probe.status === 0 && probe.stdout.trim() === wanted.join(' ')) return bin;
  console.log(`installing ${wanted.join(', ')} into ${venv}`);
  if (!existsSync(join(bin, 'pip'))) run('python3', ['-m', 'venv', venv]);
  // Wheels only: nothing is compiled (psycopg2-binary ships libpq inside its wheel).
  run(join(bin, 'pip'), ['install', '--quiet', '--only-binary=:all:', ...wanted]);
  return bin;
}

function run(command: string, args: string[], env?: NodeJS.ProcessEnv): string {
  const result = spawnSync(command, args, { encoding: 'utf8', env });
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited with ${result.status}: ${result.stderr || result.stdout}`.trim(),
    );
  }
  return result.stdout;
}

export interface RunningAlerta {
  /** Where the webhook listens: `POST {webhookUrl}` with `Authorization: Key {apiKey}`. */
  webhookUrl: string;
  apiKey: string;
  /** The gunicorn master's and its workers' pids, for RSS readings. */
  pids(): number[];
  /** Stops gunicorn (master and workers) and removes the config directory. */
  stop(): Promise<void>;
}

const ADMIN = 'bench-admin';

/**
 * Starts Alerta on `databaseUrl` (an empty database: Alerta creates its own
 * schema) under gunicorn with `workers` sync workers on a free loopback port,
 * mounted at `/api` as in Alerta's own container image. Authentication is
 * required, and an admin API key is created beforehand (`alertad key`), so
 * every webhook request is authenticated with a key as terdut's are.
 * Plugins: none (Alerta's defaults add reject, blackout, heartbeat,
 * remote_ip and forwarder; each adds work per alert, so this favours Alerta).
 */
export async function startAlerta(databaseUrl: string, workers: number): Promise<RunningAlerta> {
  const bin = ensureAlertaVenv();
  const dir = mkdtempSync(join(tmpdir(), 'terdut-bench-alerta-'));
  const configFile = join(dir, 'alertad.conf');
  // A Python file; json.dumps-style literals are valid Python for strings and lists.
  writeFileSync(
    configFile,
    [
      'DEBUG = False',
      `SECRET_KEY = ${JSON.stringify(randomBytes(24).toString('hex'))}`,
      `DATABASE_URL = ${JSON.stringify(databaseUrl)}`,
      'AUTH_REQUIRED = True',
      `ADMIN_USERS = [${JSON.stringify(ADMIN)}]`,
      'PLUGINS = []',
      "LOG_LEVEL = 'WARNING'",
      '',
    ].join('\n'),
  );
  // Alerta reads its settings from this file; nothing of the benchmark's own environment is passed on.
  const env = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: process.env.HOME ?? '',
    ALERTA_SVR_CONF_FILE: configFile,
  };
  const apiKey = randomBytes(24).toString('hex');
  // Creates the schema (as every Alerta process does on start) and the key,
  // before the workers start, so they do not race each other to create it.
  run(join(bin, 'alertad'), ['key', '--username', ADMIN, '--key', apiKey], env);

  const processes = new ChildProcessGroup();
  const port = await freeLoopbackPort();
  const logPath = join(dir, 'gunicorn.log');
  const gunicorn = processes.spawn({
    name: 'gunicorn (Alerta)',
    command: join(bin, 'gunicorn'),
    args: [
      '--workers',
      String(workers),
      '--bind',
      `127.0.0.1:${port}`,
      // A request log written as terdut writes its own: to a file no one reads.
      // Stopping must not wait long for a worker in the middle of a request.
      '--graceful-timeout',
      '3',
      '--access-logfile',
      join(dir, 'access.log'),
      'alerta:create_app()',
    ],
    env: { ...env, SCRIPT_NAME: '/api' },
    logPath,
  });
  const base = `http://127.0.0.1:${port}/api`;
  const stop = async () => {
    await processes.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitUntil(async () => (await fetch(`${base}/management/gtg`)).ok, {
      timeoutMs: 60_000,
      intervalMs: 200,
      describe: () => `Alerta did not answer ${base}/management/gtg`,
      child: gunicorn,
    });
  } catch (error) {
    const message = `${(error as Error).message}\nlast lines of the gunicorn log:\n${logTail(logPath)}`;
    await stop();
    throw new Error(message, { cause: error });
  }
  return {
    webhookUrl: `${base}/webhooks/prometheus`,
    apiKey,
    pids() {
      const master = gunicorn.process.pid;
      if (master === undefined) return [];
      const children = spawnSync('pgrep', ['-P', String(master)], { encoding: 'utf8' }).stdout;
      return [master, ...children.split('\n').filter(Boolean).map(Number)];
    },
    stop,
  };
}

/**
 * A sender of Alertmanager notifications to Alerta's webhook that checks
 * Alerta took every alert in each: a 201 whose `id` (one alert) or `ids`
 * (more) names as many alerts as were sent. Throws otherwise.
 */
export function alertaSender(alerta: RunningAlerta): SendNotification {
  const poster = new JsonHttp(alerta.webhookUrl, { authorization: `Key ${alerta.apiKey}` });
  return async (notification) => {
    const { text } = await poster.postExpecting(notification, [201]);
    const body = JSON.parse(text) as { id?: string; ids?: string[] };
    const taken = body.ids?.length ?? (body.id ? 1 : 0);
    if (taken !== notification.alerts.length) {
      throw new Error(`Alerta took ${taken} of the ${notification.alerts.length} alerts sent`);
    }
  };
}
