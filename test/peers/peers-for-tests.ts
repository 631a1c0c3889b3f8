/**
 * The real Go-built peers (kube-apiserver + etcd, Alertmanager) for `npm test`.
 *
 * `startPeersForTests()` is called once by test/global-setup.ts: it builds
 * missing or outdated binaries, starts one control plane with the third-party
 * CRDs installed, and exports where everything is through the environment,
 * which every test file inherits:
 *
 * - TERDUT_TEST_KUBECONFIG: kubeconfig of the shared control plane (admin)
 * - TERDUT_TEST_KUBE_SERVER: its `https://127.0.0.1:<port>`
 * - TERDUT_TEST_ALERTMANAGER_BIN, TERDUT_TEST_KUBE_APISERVER_BIN, TERDUT_TEST_ETCD_BIN
 *
 * Test files share that control plane, so each works in namespaces of its
 * own (`uniqueNamespace`). A file run alone (`node --test file.test.ts`)
 * gets a control plane of its own from `kubeForTests()`.
 *
 * Set TERDUT_TEST_KUBE=0 to skip starting the control plane (tests that need
 * it then start their own).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { peerBinary, repoRoot } from './child-processes.ts';
import { installThirdPartyCrds } from './crds.ts';
import {
  credentialsFromKubeconfig,
  kubeRequestOk,
  startKubeControlPlane,
  type KubeCredentials,
} from './kube.ts';

export interface TestPeers {
  /** The variables set in `process.env` (for logging or passing on). */
  env: Record<string, string>;
  /** Milliseconds each step took, for the README and for noticing regressions. */
  timings: Record<string, number>;
  stop(): Promise<void>;
}

/** Runs tools/build-peers.sh, which is a fast no-op when the binaries match their pins. */
export function buildPeers(): void {
  try {
    execFileSync('bash', [join(repoRoot, 'tools', 'build-peers.sh')], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
  } catch (error) {
    throw new Error(
      `building the real test peers failed; run bash tools/build-peers.sh and read its output (${(error as Error).message})`,
      {
        cause: error,
      },
    );
  }
}

/** See the file comment. */
export async function startPeersForTests(): Promise<TestPeers> {
  const timings: Record<string, number> = {};
  const timed = async <T>(name: string, step: () => T | Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await step();
    } finally {
      timings[name] = Math.round(performance.now() - started);
    }
  };
  if (process.env.TERDUT_SKIP_PEER_BUILD !== '1') await timed('build', buildPeers);

  const env: Record<string, string> = {
    TERDUT_TEST_ALERTMANAGER_BIN: peerBinary('alertmanager'),
    TERDUT_TEST_KUBE_APISERVER_BIN: peerBinary('kube-apiserver'),
    TERDUT_TEST_ETCD_BIN: peerBinary('etcd'),
  };
  let stopKube = async (): Promise<void> => {};
  if (process.env.TERDUT_TEST_KUBE !== '0') {
    const kube = await timed('kube', () => startKubeControlPlane());
    stopKube = () => kube.stop();
    try {
      await timed('crds', () => installThirdPartyCrds(kube.admin));
    } catch (error) {
      await kube.stop();
      throw error;
    }
    env.TERDUT_TEST_KUBECONFIG = kube.kubeconfigPath;
    env.TERDUT_TEST_KUBE_SERVER = kube.server;
  }
  Object.assign(process.env, env);
  return { env, timings, stop: () => stopKube() };
}

export interface KubeForTests {
  admin: KubeCredentials;
  kubeconfigPath: string;
  /** Stops the control plane if this call started it; a no-op on the shared one. */
  stop(): Promise<void>;
}

/**
 * The shared control plane when the global setup started one, else a new one
 * (with the third-party CRDs) that `stop()` tears down.
 */
export async function kubeForTests(): Promise<KubeForTests> {
  const shared = process.env.TERDUT_TEST_KUBECONFIG;
  if (shared)
    return { admin: credentialsFromKubeconfig(shared), kubeconfigPath: shared, stop: async () => {} };
  const kube = await startKubeControlPlane();
  try {
    await installThirdPartyCrds(kube.admin);
  } catch (error) {
    await kube.stop();
    throw error;
  }
  return { admin: kube.admin, kubeconfigPath: kube.kubeconfigPath, stop: () => kube.stop() };
}

/**
 * Creates a namespace named `<prefix>-<random>` and returns its name. Nothing
 * deletes it: without a namespace controller deletion never completes, and
 * the whole control plane is thrown away at the end of the run anyway.
 */
export async function uniqueNamespace(admin: KubeCredentials, prefix = 'test'): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await kubeRequestOk(admin, 'POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
  });
  return name;
}
