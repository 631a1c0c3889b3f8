/**
 * The terdut-server image as a user runs it: a read-only root file system,
 * a non-root numeric user, no capabilities, the embedded database on the
 * image's volume; it answers /readyz, reports its version, and `podman stop`
 * (SIGTERM) ends it with exit code 0.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freeLoopbackPort, repoRoot, waitUntil } from '../peers/child-processes.ts';
import { containerState, logsOf, podman, removeContainer, serverImage, uniqueName } from './podman.ts';

const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string })
  .version;
const skip = serverImage ? false : 'set TERDUT_TEST_SERVER_IMAGE (bash .ci/images builds it)';
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test(
  'the image carries its version, source and licence labels and runs as user 10001',
  { skip },
  async () => {
    const labels = JSON.parse(
      await podman(['image', 'inspect', '--format', '{{json .Labels}}', serverImage!]),
    ) as Record<string, string>;
    assert.equal(labels['org.opencontainers.image.version'], version);
    assert.match(labels['org.opencontainers.image.source'] ?? '', /^https:\/\//);
    assert.ok(labels['org.opencontainers.image.licenses'], 'a licence label');
    assert.equal(
      (await podman(['image', 'inspect', '--format', '{{.Config.User}}', serverImage!])).trim(),
      '10001:10001',
    );
    assert.equal(
      (await podman(['run', '--rm', '--network=none', serverImage!, '--version'])).trim(),
      version,
    );
    // On PATH for `kubectl exec … -- terdut-server admin recover`, as the operator's messages say.
    assert.equal(
      (
        await podman([
          'run',
          '--rm',
          '--network=none',
          '--entrypoint',
          'terdut-server',
          serverImage!,
          '--version',
        ])
      ).trim(),
      version,
    );
  },
);

test(
  'read-only, non-root, without capabilities: ready on the embedded database, and SIGTERM exits 0',
  { skip, timeout: 180_000 },
  async () => {
    const name = uniqueName('terdut-smoke-server');
    const volume = `${name}-data`;
    const port = await freeLoopbackPort();
    cleanups.push(async () => {
      await removeContainer(name);
      await podman(['volume', 'rm', '--force', volume]).catch(() => {});
    });
    await podman([
      'run',
      '--detach',
      '--name',
      name,
      '--publish',
      `127.0.0.1:${port}:8080`,
      '--read-only',
      '--user',
      '10001',
      '--cap-drop=all',
      '--security-opt',
      'no-new-privileges',
      '--volume',
      `${volume}:/var/lib/terdut`,
      '--env',
      'LOG_LEVEL=info',
      serverImage!,
    ]);
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(
      async () => (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) })).status === 200,
      {
        timeoutMs: 120_000,
        intervalMs: 500,
        describe: () => `the container did not answer 200 on /readyz`,
      },
    ).catch(async (error: Error) => {
      throw new Error(`${error.message}\ncontainer output:\n${await logsOf(name)}`, { cause: error });
    });
    const health = (await (await fetch(`${url}/healthz`)).json()) as { status: string; version: string };
    assert.deepEqual(health, { status: 'ok', version });
    // Not bootstrapped: the public bootstrap state answers, the rest needs credentials.
    assert.deepEqual(await (await fetch(`${url}/api/bootstrap`)).json(), { bootstrapped: false });
    assert.equal((await fetch(`${url}/api/incidents`)).status, 401);

    await podman(['stop', '--time', '20', name], 60_000);
    const state = await containerState(name);
    const logs = await logsOf(name);
    assert.equal(state.running, false);
    assert.equal(state.exitCode, 0, `exit code after SIGTERM; output:\n${logs}`);
    assert.match(logs, /shutting down/);
  },
);
