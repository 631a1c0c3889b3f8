/**
 * deploy/ on the real kube-apiserver: everything the kustomization lists
 * applies, and the generated least-privilege RBAC is enough for the whole
 * reconcile: an operator authenticated as the terdut-operator
 * ServiceAccount (a real token from the TokenRequest API, leader election
 * on) takes a TerdutServer to Ready and through deletion.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { repoRoot } from '../peers/child-processes.ts';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeRequest, kubeRequestOk } from '../peers/kube.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import { waitUntil } from '../peers/child-processes.ts';
import { createTestPostgres } from '../support/databases.ts';
import { startOperator } from '../../packages/operator/src/operator.ts';
import { loadOperatorConfig } from '../../packages/operator/src/config.ts';
import { KubeClient } from '../../packages/operator/src/runtime/kube-client.ts';
import {
  applyYamlFile,
  createSecret,
  createTerdutServer,
  getTerdutServer,
  listSecrets,
  operatorNamespace,
  waitForCondition,
  waitForDeployment,
  yamlIdentity,
} from './support/operator.ts';

let kube: KubeForTests;
let standIn: KubeletStandIn;
let database: { url: string; drop(): Promise<void> } | undefined;

before(async () => {
  kube = await kubeForTests();
  standIn = new KubeletStandIn(kube.admin);
});
after(async () => {
  await standIn?.stop();
  await database?.drop();
  await kube?.stop();
});

test('every manifest the kustomization lists applies to the API server', async () => {
  const kustomization = readFileSync(join(repoRoot, 'deploy', 'kustomization.yaml'), 'utf8');
  const resources = [...kustomization.matchAll(/^ {2}- (\S+)$/gm)].map((m) => m[1]!);
  assert.deepEqual(resources.sort(), [
    'crds/terdut.ryuvia.com_terdutservers.yaml',
    'operator/operator.yaml',
    'rbac/rbac.yaml',
  ]);
  // Namespaces first, as kustomize orders them.
  for (const file of [
    'operator/operator.yaml',
    'crds/terdut.ryuvia.com_terdutservers.yaml',
    'rbac/rbac.yaml',
  ])
    await applyYamlFile(kube.admin, join(repoRoot, 'deploy', file));
  const deployment = await kubeRequestOk<any>(
    kube.admin,
    'GET',
    '/apis/apps/v1/namespaces/terdut-system/deployments/terdut-operator',
  );
  const pod = deployment.spec.template.spec;
  assert.equal(pod.serviceAccountName, 'terdut-operator');
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(pod.containers[0].readinessProbe.httpGet.path, '/readyz');
  assert.equal(pod.containers[0].livenessProbe.httpGet.path, '/healthz');
  assert.ok(pod.containers[0].resources.limits.memory);
  await waitUntil(
    async () =>
      (await kubeRequest(kube.admin, 'GET', '/apis/terdut.ryuvia.com/v1alpha1/terdutservers')).status === 200,
    { timeoutMs: 30_000, describe: () => 'TerdutServers are not served' },
  );

  // The samples are valid TerdutServers (server-side dry run).
  for (const sample of ['terdutserver-database-url.yaml', 'terdutserver-zalando.yaml']) {
    const text = readFileSync(join(repoRoot, 'deploy', 'samples', sample), 'utf8');
    const doc = text.split(/^---\s*$/m).find((d) => /^kind: TerdutServer$/m.test(d))!;
    const { name } = yamlIdentity(doc);
    const ns = await uniqueNamespace(kube.admin, 'sample');
    const res = await kubeRequest(
      kube.admin,
      'PATCH',
      `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${ns}/terdutservers/${name}?fieldManager=terdut-tests&dryRun=All`,
      {
        body: doc.replace(/namespace: oncall/, `namespace: ${ns}`),
        contentType: 'application/apply-patch+yaml',
      },
    );
    assert.equal(res.status, 201, `${sample}: ${res.text}`);
  }
});

test('the generated RBAC is enough for the whole reconcile, and no more than it needs', async () => {
  const token = (
    await kubeRequestOk<any>(
      kube.admin,
      'POST',
      `/api/v1/namespaces/${operatorNamespace}/serviceaccounts/terdut-operator/token`,
      {
        body: {
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenRequest',
          spec: { expirationSeconds: 3600 },
        },
      },
    )
  ).status.token as string;

  // Least privilege: nothing outside the listed rules.
  assert.equal((await kubeRequest(kube.admin, 'GET', '/api/v1/pods', { token })).status, 403);
  assert.equal(
    (
      await kubeRequest(
        kube.admin,
        'DELETE',
        `/apis/apps/v1/namespaces/${operatorNamespace}/deployments/terdut-operator`,
        { token },
      )
    ).status,
    403,
  );

  // Secrets are deleted in the operator's own namespace only.
  const elsewhere = await uniqueNamespace(kube.admin, 'op-rbac-secrets');
  await createSecret(kube.admin, elsewhere, 'app-secret', { password: 'keep me' });
  assert.equal(
    (
      await kubeRequest(kube.admin, 'DELETE', `/api/v1/namespaces/${elsewhere}/secrets/app-secret`, {
        token,
      })
    ).status,
    403,
    'a Secret outside the operator namespace cannot be deleted with its token',
  );

  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      { name: 'test', server: kube.admin.server, caData: Buffer.from(kube.admin.ca).toString('base64') },
    ],
    users: [{ name: 'terdut-operator', token }],
    contexts: [{ name: 'test', cluster: 'test', user: 'terdut-operator' }],
    currentContext: 'test',
  });
  const namespace = await uniqueNamespace(kube.admin, 'op-rbac');
  const logs: string[] = [];
  const record = (msg: string, fields?: Record<string, unknown>) =>
    logs.push(`${msg} ${JSON.stringify(fields ?? {})}`);
  const operator = await startOperator({
    config: loadOperatorConfig(
      [
        '--operator-namespace',
        operatorNamespace,
        '--watch-namespaces',
        namespace,
        '--lease-name',
        `rbac-${namespace}`,
        '--metrics-address',
        '127.0.0.1:0',
        '--probe-address',
        '127.0.0.1:0',
      ],
      {},
    ),
    kube: new KubeClient(config),
    logger: { debug: () => {}, info: record, warn: record, error: record },
    resolveServerUrl: (ns, service, url) => standIn.serviceUrls.get(`${ns}/${service}`) ?? url,
  });
  try {
    database = await createTestPostgres();
    await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: database.url });
    await createTerdutServer(kube.admin, namespace, 'rbac', { database: { secretRef: { name: 'db' } } });
    await waitForDeployment(kube.admin, namespace, 'rbac');
    await standIn.runDeployment(namespace, 'rbac');
    const ready = await waitForCondition(
      kube.admin,
      namespace,
      'rbac',
      { type: 'Ready', status: 'True' },
      90_000,
    );
    assert.ok(operator.leading(), 'the operator took the Lease with its Role');

    await kubeRequestOk(
      kube.admin,
      'DELETE',
      `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/rbac`,
    );
    await waitUntil(async () => (await getTerdutServer(kube.admin, namespace, 'rbac')) === undefined, {
      timeoutMs: 30_000,
      describe: () => `the TerdutServer was not finalized; operator log:\n${logs.join('\n')}`,
    });
    assert.deepEqual(
      await listSecrets(kube.admin, operatorNamespace, `terdut.ryuvia.com/owner-uid=${ready.metadata.uid}`),
      [],
    );
    const forbidden = logs.filter((line) => /forbidden|403/i.test(line));
    assert.deepEqual(forbidden, [], 'no request of the operator was refused by RBAC');
  } finally {
    await operator.stop();
  }
});
