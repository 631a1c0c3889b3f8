/**
 * The real Go-built peers (kube-apiserver + etcd, Alertmanager) for `npm test`.
 *
 * test/global-setup.ts calls `buildPeers()` once (unless
 * TERDUT_SKIP_PEER_BUILD=1): it builds missing or outdated binaries. Each test
 * file that needs a control plane gets one of its own from `kubeForTests()`,
 * with the third-party CRDs installed, because an operator under test
 * watches every namespace and must not see another file's objects; inside
 * it, tests work in namespaces of their own (`uniqueNamespace`).
 * TERDUT_TEST_KUBECONFIG, when set, names a running control plane that
 * `kubeForTests()` uses instead (as an admin), for a quicker loop by hand.
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { repoRoot } from './child-processes.ts';
import { installThirdPartyCrds } from './crds.ts';
import {
  credentialsFromKubeconfig,
  kubeRequestOk,
  startKubeControlPlane,
  type KubeCredentials,
} from './kube.ts';

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

export interface KubeForTests {
  admin: KubeCredentials;
  kubeconfigPath: string;
  /** Stops the control plane if this call started it; a no-op on the shared one. */
  stop(): Promise<void>;
}

/**
 * The control plane TERDUT_TEST_KUBECONFIG names, else a new one (with the
 * third-party CRDs) that `stop()` tears down.
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
