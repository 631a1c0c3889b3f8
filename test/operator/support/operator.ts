/**
 * Test support for terdut-operator on the real kube-apiserver: installing the
 * generated CRD, and waiting for TerdutServer conditions.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, waitUntil } from '../../peers/child-processes.ts';
import { kubeRequest, kubeRequestOk, type KubeCredentials } from '../../peers/kube.ts';

const crdPath = join(repoRoot, 'deploy', 'crds', 'terdut.ryuvia.com_terdutservers.yaml');

/** Applies deploy/crds/ (the committed, generated file) and waits until TerdutServers are served. */
export async function installTerdutCrd(admin: KubeCredentials): Promise<void> {
  await kubeRequestOk(
    admin,
    'PATCH',
    '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/terdutservers.terdut.ryuvia.com?fieldManager=terdut-tests&force=true',
    { body: readFileSync(crdPath, 'utf8'), contentType: 'application/apply-patch+yaml' },
  );
  await waitUntil(
    async () =>
      (await kubeRequest(admin, 'GET', '/apis/terdut.ryuvia.com/v1alpha1/terdutservers?limit=1')).status ===
      200,
    { timeoutMs: 30_000, describe: () => 'the TerdutServer CRD was applied but is not served after 30 s' },
  );
}
