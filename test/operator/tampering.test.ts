/**
 * People and tools that change what the operator owns: it converges back
 * without hammering the API server.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeRequestOk } from '../peers/kube.ts';
import { waitUntil } from '../peers/child-processes.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import {
  createTerdutServer,
  ensureNamespace,
  getSecret,
  installTerdutCrd,
  operatorNamespace,
  secretValue,
  waitForCondition,
} from './support/operator.ts';
import { startInProcessOperator, type InProcessOperator } from './support/operator-process.ts';

let kube: KubeForTests;
let namespace: string;
let standIn: KubeletStandIn;
let operator: InProcessOperator;
const requests: string[] = [];

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  namespace = await uniqueNamespace(kube.admin, 'op-tamper');
  standIn = new KubeletStandIn(kube.admin);
  operator = await startInProcessOperator({
    kubeconfigPath: kube.kubeconfigPath,
    standIn,
    watchNamespaces: [namespace],
  });
  operator.kube.onRequest((verb, resource, status) => requests.push(`${verb} ${resource} ${status}`));
});

after(async () => {
  await operator?.stop();
  await standIn?.stop();
  await kube?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('a bootstrap-token Secret whose labels a person or tool removed: the operator keeps its token, labels it again, and does not loop', async () => {
  await createTerdutServer(kube.admin, namespace, 'relabel', {
    database: { secretRef: { name: 'missing-db' } },
  });
  await waitForCondition(kube.admin, namespace, 'relabel', {
    type: 'DatabaseReady',
    status: 'False',
    reason: 'DatabaseSecretMissing',
  });
  const secretPath = `/api/v1/namespaces/${namespace}/secrets/relabel-bootstrap-token`;
  const token = secretValue(await getSecret(kube.admin, namespace, 'relabel-bootstrap-token'), 'token');
  assert.ok(token);

  const from = requests.length;
  await kubeRequestOk(kube.admin, 'PATCH', secretPath, {
    body: { metadata: { labels: { 'app.kubernetes.io/managed-by': null } } },
  });
  await waitUntil(
    async () =>
      (await getSecret(kube.admin, namespace, 'relabel-bootstrap-token')).metadata.labels?.[
        'app.kubernetes.io/managed-by'
      ] === 'terdut-operator',
    {
      timeoutMs: 10_000,
      describe: () =>
        `the token Secret was not labelled again (${requests.slice(from).filter((r) => r.startsWith('create secrets')).length} create requests meanwhile)`,
    },
  );
  await sleep(2000);
  const writes = requests.slice(from).filter((r) => r.startsWith('create secrets'));
  assert.ok(writes.length <= 2, `the operator kept creating the token Secret: ${writes.length} times`);
  assert.equal(
    secretValue(await getSecret(kube.admin, namespace, 'relabel-bootstrap-token'), 'token'),
    token,
    'the token the server trusts is kept',
  );
});
