/**
 * The TerdutServer's scale subresource on the real kube-apiserver: what
 * `kubectl scale terdutserver/NAME --replicas=N` and a HorizontalPodAutoscaler
 * read and write. A change through it reaches the Deployment; the count and
 * the pods' selector come back in it; a count the schema refuses is refused.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeRequest, kubeRequestOk } from '../peers/kube.ts';
import { waitUntil } from '../peers/child-processes.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import {
  createSecret,
  createTerdutServer,
  ensureNamespace,
  installTerdutCrd,
  operatorNamespace,
  waitForDeployment,
} from './support/operator.ts';
import { startInProcessOperator, type InProcessOperator } from './support/operator-process.ts';

let kube: KubeForTests;
let namespace: string;
let standIn: KubeletStandIn;
let operator: InProcessOperator;

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  namespace = await uniqueNamespace(kube.admin, 'op-scale');
  standIn = new KubeletStandIn(kube.admin);
  operator = await startInProcessOperator({
    kubeconfigPath: kube.kubeconfigPath,
    standIn,
    watchNamespaces: [namespace],
  });
});

after(async () => {
  await operator?.stop();
  await standIn?.stop();
  await kube?.stop();
});

interface Scale {
  kind: string;
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

const scalePath = (name: string) =>
  `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/${name}/scale`;
const deploymentPath = (name: string) => `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`;

async function waitForScale(name: string, wanted: { spec: number; status: number }): Promise<Scale> {
  let scale: Scale | undefined;
  await waitUntil(
    async () => {
      scale = await kubeRequestOk<Scale>(kube.admin, 'GET', scalePath(name));
      return scale.spec.replicas === wanted.spec && scale.status.replicas === wanted.status;
    },
    {
      timeoutMs: 30_000,
      describe: () => `scale is ${JSON.stringify(scale)}, wanted ${JSON.stringify(wanted)}`,
    },
  );
  return scale!;
}

test('kubectl scale: the count reaches the Deployment, the pods and their selector come back', async () => {
  await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: 'postgres://u:p@db:5432/terdut' });
  await createTerdutServer(kube.admin, namespace, 'scaled', { database: { secretRef: { name: 'db' } } });
  await waitForDeployment(kube.admin, namespace, 'scaled');
  await standIn.markDeploymentAvailable(namespace, 'scaled');
  const first = await waitForScale('scaled', { spec: 1, status: 1 });
  assert.equal(first.kind, 'Scale');

  // A HorizontalPodAutoscaler finds the pods by this selector: it must select the Deployment's pods.
  const deployment = await kubeRequestOk<any>(kube.admin, 'GET', deploymentPath('scaled'));
  const podLabels = deployment.spec.template.metadata.labels as Record<string, string>;
  const selected = Object.fromEntries(
    (first.status.selector ?? '').split(',').map((term) => term.split('=')),
  );
  assert.ok(Object.keys(selected).length > 0, `a selector: ${JSON.stringify(first.status)}`);
  for (const [label, value] of Object.entries(selected)) assert.equal(podLabels[label], value, label);
  assert.deepEqual(selected, deployment.spec.selector.matchLabels);

  // What `kubectl scale --replicas=3` sends.
  await kubeRequestOk(kube.admin, 'PATCH', scalePath('scaled'), {
    body: { spec: { replicas: 3 } },
    contentType: 'application/merge-patch+json',
  });
  await waitUntil(
    async () => (await kubeRequestOk<any>(kube.admin, 'GET', deploymentPath('scaled'))).spec.replicas === 3,
    { timeoutMs: 30_000, describe: () => 'the Deployment did not get 3 replicas' },
  );
  await standIn.markDeploymentAvailable(namespace, 'scaled');
  await waitForScale('scaled', { spec: 3, status: 3 });

  // The resource's own limits hold through the subresource.
  const refused = await kubeRequest(kube.admin, 'PATCH', scalePath('scaled'), {
    body: { spec: { replicas: 101 } },
    contentType: 'application/merge-patch+json',
  });
  assert.equal(refused.status, 422, refused.text);
  assert.match(refused.text, /spec\.replicas/);
  assert.equal((await kubeRequestOk<Scale>(kube.admin, 'GET', scalePath('scaled'))).spec.replicas, 3);
});
