/**
 * The terdut-operator image: `--help` and `--version` work, and the operator
 * running inside its container (read-only, non-root, no capabilities; host
 * network, to reach the test kube-apiserver on loopback) reconciles a
 * TerdutServer to Ready, then stops with exit code 0 on SIGTERM. The
 * terdut-server it bootstraps is run by the kubelet stand-in from the
 * Deployment the operator wrote -- as a real container of the server image
 * (its env, mounted token Secret, user, read-only root, dropped capabilities)
 * when TERDUT_TEST_SERVER_IMAGE names one, so the pod template and the image
 * are proven together. The operator reaches it through
 * --server-url-overrides-file, as it would reach the Service in a cluster.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort, repoRoot, waitUntil } from '../peers/child-processes.ts';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import { createTestPostgres } from '../support/databases.ts';
import {
  createSecret,
  createTerdutServer,
  installTerdutCrd,
  waitForCondition,
  waitForDeployment,
} from '../operator/support/operator.ts';
import {
  containerState,
  logsOf,
  operatorImage,
  podman,
  removeContainer,
  serverImage,
  uniqueName,
} from './podman.ts';

const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string })
  .version;
const skip = operatorImage ? false : 'set TERDUT_TEST_OPERATOR_IMAGE (bash .ci/images builds it)';

let kube: KubeForTests | undefined;
let standIn: KubeletStandIn | undefined;
let database: { url: string; drop(): Promise<void> } | undefined;
const cleanups: (() => Promise<void>)[] = [];

after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await standIn?.stop();
  await database?.drop();
  await kube?.stop();
});

test('--help and --version answer without a cluster', { skip }, async () => {
  const help = await podman(['run', '--rm', '--network=none', operatorImage!, '--help']);
  assert.match(help, /--watch-namespaces/);
  assert.match(help, new RegExp(`ghcr\\.io/ryuvia/terdut-server:${version.replaceAll('.', '\\.')}`));
  assert.equal(
    (await podman(['run', '--rm', '--network=none', operatorImage!, '--version'])).trim(),
    version,
  );
});

test(
  'the operator in its container takes a TerdutServer to Ready and exits 0 on SIGTERM',
  { skip, timeout: 240_000 },
  async () => {
    kube = await kubeForTests();
    standIn = new KubeletStandIn(kube.admin);
    const admin = kube.admin;
    await installTerdutCrd(admin);
    const operatorNamespace = await uniqueNamespace(admin, 'img-op');
    const namespace = await uniqueNamespace(admin, 'img-ts');
    database = await createTestPostgres();
    await createSecret(admin, namespace, 'db', { DATABASE_URL: database.url });

    // What the container reads: a kubeconfig and the overrides file, readable by user 10001.
    const dir = mkdtempSync(join(tmpdir(), 'terdut-operator-image-'));
    chmodSync(dir, 0o755);
    copyFileSync(kube.kubeconfigPath, join(dir, 'kubeconfig'));
    chmodSync(join(dir, 'kubeconfig'), 0o644);
    const overrides = join(dir, 'server-urls');
    writeFileSync(overrides, '', { mode: 0o644 });
    const name = uniqueName('terdut-smoke-operator');
    cleanups.push(async () => {
      await removeContainer(name);
      rmSync(dir, { recursive: true, force: true });
    });
    const probePort = await freeLoopbackPort();
    await podman([
      'run',
      '--detach',
      '--name',
      name,
      '--network=host',
      '--read-only',
      '--user',
      '10001',
      '--cap-drop=all',
      '--security-opt',
      'no-new-privileges',
      '--volume',
      `${dir}:/etc/terdut-test:ro`,
      operatorImage!,
      '--kubeconfig=/etc/terdut-test/kubeconfig',
      `--operator-namespace=${operatorNamespace}`,
      `--watch-namespaces=${namespace}`,
      '--no-leader-election',
      '--server-url-overrides-file=/etc/terdut-test/server-urls',
      `--metrics-address=127.0.0.1:${await freeLoopbackPort()}`,
      `--probe-address=127.0.0.1:${probePort}`,
    ]);
    const failWithLogs = async (error: Error): Promise<never> => {
      throw new Error(`${error.message}\noperator container output:\n${await logsOf(name)}`, {
        cause: error,
      });
    };
    await waitUntil(
      async () =>
        (await fetch(`http://127.0.0.1:${probePort}/readyz`, { signal: AbortSignal.timeout(2000) }))
          .status === 200,
      { timeoutMs: 60_000, intervalMs: 500, describe: () => 'the operator container did not become ready' },
    ).catch(failWithLogs);

    await createTerdutServer(admin, namespace, 'img', { database: { secretRef: { name: 'db' } } });
    const deployment = await waitForDeployment(admin, namespace, 'img').catch(failWithLogs);
    assert.equal(
      deployment.spec.template.spec.containers[0].image,
      `ghcr.io/ryuvia/terdut-server:${version}`,
    );
    const workload = await standIn.runDeployment(
      namespace,
      'img',
      serverImage ? { podman: { image: serverImage }, readyTimeoutMs: 120_000 } : {},
    );
    if (serverImage) {
      // The pod template ran as a real container of the image, as the template says.
      const inspect = JSON.parse(
        await podman([
          'inspect',
          '--format',
          '{{json .Config.User}} {{json .HostConfig.ReadonlyRootfs}} {{json .EffectiveCaps}}',
          workload.container!,
        ]).then((out) => `[${out.trim().split(' ').join(',')}]`),
      ) as [string, boolean, string[] | null];
      assert.equal(inspect[0], '10001:10001');
      assert.equal(inspect[1], true);
      assert.deepEqual(inspect[2] ?? [], [], 'no capabilities left (drop: ALL)');
    }
    writeFileSync(overrides, `${namespace}/img=${workload.url}\n`);
    await waitForCondition(admin, namespace, 'img', { type: 'Ready', status: 'True' }, 120_000).catch(
      failWithLogs,
    );

    await podman(['stop', '--time', '30', name], 60_000);
    const state = await containerState(name);
    assert.equal(state.exitCode, 0, `exit code after SIGTERM; output:\n${await logsOf(name)}`);
  },
);
