/**
 * TerdutServers the CRD schema accepts but the objects made from them do
 * not pass the API server's validation: the operator says so in status and
 * an event, and does not retry until the spec changes.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeRequest, kubeRequestOk } from '../peers/kube.ts';
import { waitUntil } from '../peers/child-processes.ts';
import { createTestPostgres } from '../support/databases.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import {
  conditionOf,
  createSecret,
  createTerdutServer,
  ensureNamespace,
  installTerdutCrd,
  operatorNamespace,
  waitForCondition,
  waitForDeployment,
  waitForEvent,
} from './support/operator.ts';
import { startInProcessOperator, type InProcessOperator } from './support/operator-process.ts';
import { argoCdHealth } from './support/argocd-health.ts';

let kube: KubeForTests;
let namespace: string;
let standIn: KubeletStandIn;
let operator: InProcessOperator;
const databases: { drop(): Promise<void> }[] = [];

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  namespace = await uniqueNamespace(kube.admin, 'op-invalid');
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
  for (const database of databases) await database.drop();
  await kube?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const tsPath = (name: string) =>
  `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${namespace}/terdutservers/${name}`;

test('resources the Deployment refuses (requests above limits): Available=False DeploymentInvalid naming the field, no retry loop, converges once the spec is fixed', async () => {
  await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: 'postgres://u:p@db:5432/terdut' });
  await createTerdutServer(kube.admin, namespace, 'greedy', {
    database: { secretRef: { name: 'db' } },
    resources: { requests: { cpu: '2' }, limits: { cpu: '1' } },
  });
  const refused = await waitForCondition(kube.admin, namespace, 'greedy', {
    type: 'Available',
    status: 'False',
    reason: 'DeploymentInvalid',
  });
  const available = conditionOf(refused, 'Available');
  assert.match(available.message, /resources\.requests.*must be less than or equal to cpu limit/);
  assert.match(available.message, /correct the TerdutServer's spec/);
  assert.equal(available.observedGeneration, refused.metadata.generation);
  assert.equal(conditionOf(refused, 'Ready').reason, 'DeploymentInvalid');
  // Argo CD with the README's health check: a person has to act.
  assert.deepEqual(await argoCdHealth(refused), {
    status: 'Degraded',
    message: conditionOf(refused, 'Ready').message,
  });
  const event = await waitForEvent(kube.admin, namespace, 'DeploymentInvalid');
  assert.equal(event.type, 'Warning');

  // A person must change the spec: the operator does not retry meanwhile.
  await sleep(3000);
  assert.deepEqual(
    operator.logs.filter((line) => line.includes('reconcile failed') && line.includes('/greedy')),
    [],
  );

  await kubeRequestOk(kube.admin, 'PATCH', tsPath('greedy'), {
    body: { spec: { resources: { limits: { cpu: '2' } } } },
    contentType: 'application/merge-patch+json',
  });
  const deployment = await waitForDeployment(kube.admin, namespace, 'greedy');
  assert.deepEqual(deployment.spec.template.spec.containers[0].resources.limits, { cpu: '2' });
  const fixed = await waitForCondition(kube.admin, namespace, 'greedy', {
    type: 'Available',
    status: 'False',
    reason: 'ReplicasNotReady',
  });
  assert.equal(conditionOf(fixed, 'Available').observedGeneration, fixed.metadata.generation);
});

test('parentRefs the HTTPRoute refuses (the same Gateway twice without sectionName): Exposed=False RouteInvalid naming the field once bootstrapped, no retry loop, the route appears once fixed', async (t) => {
  const database = await createTestPostgres();
  databases.push(database);
  await createSecret(kube.admin, namespace, 'routed-db', { DATABASE_URL: database.url });
  await createTerdutServer(kube.admin, namespace, 'routed', {
    database: { secretRef: { name: 'routed-db' } },
    networking: {
      hostname: 'terdut.example.com',
      parentRefs: [{ name: 'public' }, { name: 'public' }],
    },
  });
  await waitForDeployment(kube.admin, namespace, 'routed');
  const workload = await standIn.runDeployment(namespace, 'routed');
  t.after(() => workload.stop());
  const refused = await waitForCondition(kube.admin, namespace, 'routed', {
    type: 'Exposed',
    status: 'False',
    reason: 'RouteInvalid',
  });
  assert.equal(conditionOf(refused, 'Bootstrapped').status, 'True');
  const exposed = conditionOf(refused, 'Exposed');
  assert.match(exposed.message, /spec\.parentRefs.*sectionName must be unique/);
  assert.match(exposed.message, /correct spec\.networking/);
  assert.equal(conditionOf(refused, 'Ready').reason, 'RouteInvalid');
  assert.equal((await waitForEvent(kube.admin, namespace, 'RouteInvalid')).type, 'Warning');

  await sleep(3000);
  assert.deepEqual(
    operator.logs.filter((line) => line.includes('reconcile failed') && line.includes('/routed')),
    [],
  );

  await kubeRequestOk(kube.admin, 'PATCH', tsPath('routed'), {
    body: { spec: { networking: { parentRefs: [{ name: 'public', namespace: 'gateways' }] } } },
    contentType: 'application/merge-patch+json',
  });
  await waitForCondition(kube.admin, namespace, 'routed', {
    type: 'Exposed',
    status: 'False',
    reason: 'RouteNotAccepted',
  });
  await waitUntil(
    async () =>
      (
        await kubeRequest(
          kube.admin,
          'GET',
          `/apis/gateway.networking.k8s.io/v1/namespaces/${namespace}/httproutes/routed`,
        )
      ).status === 200,
    { timeoutMs: 10_000, describe: () => 'the HTTPRoute was not created once the spec was fixed' },
  );
});

test('a time zone terdut-server would refuse: Available=False ServerSettingsInvalid naming spec.timezone, no Deployment to crash-loop, made once corrected', async () => {
  await createSecret(kube.admin, namespace, 'db-zone', { DATABASE_URL: 'postgres://u:p@db:5432/terdut' });
  await createTerdutServer(kube.admin, namespace, 'martian', {
    database: { secretRef: { name: 'db-zone' } },
    timezone: 'Mars/Olympus',
  });
  const refused = await waitForCondition(kube.admin, namespace, 'martian', {
    type: 'Available',
    status: 'False',
    reason: 'ServerSettingsInvalid',
  });
  assert.match(
    conditionOf(refused, 'Available').message,
    /^spec\.timezone "Mars\/Olympus" is not an IANA time zone/,
  );
  assert.equal((await waitForEvent(kube.admin, namespace, 'ServerSettingsInvalid')).type, 'Warning');
  const deployments = await kubeRequest(
    kube.admin,
    'GET',
    `/apis/apps/v1/namespaces/${namespace}/deployments?labelSelector=${encodeURIComponent('app.kubernetes.io/instance=martian')}`,
  );
  assert.deepEqual(deployments.json<{ items: unknown[] }>().items, [], 'no pods that could only crash-loop');

  await kubeRequestOk(kube.admin, 'PATCH', tsPath('martian'), {
    body: { spec: { timezone: 'Europe/Berlin' } },
    contentType: 'application/merge-patch+json',
  });
  const deployment = await waitForDeployment(kube.admin, namespace, 'martian');
  assert.ok(
    deployment.spec.template.spec.containers[0].env.some(
      (env: { name: string; value?: string }) =>
        env.name === 'TERDUT_TIMEZONE' && env.value === 'Europe/Berlin',
    ),
  );
});

test('an OIDC client Secret that does not exist: Available=False OIDCSecretMissing naming it (not "check its pods"), cleared by its appearance without polling', async () => {
  await createSecret(kube.admin, namespace, 'db-oidc', { DATABASE_URL: 'postgres://u:p@db:5432/terdut' });
  await createTerdutServer(kube.admin, namespace, 'sso', {
    database: { secretRef: { name: 'db-oidc' } },
    publicURL: 'https://oncall.example.com',
    oidc: {
      issuerURL: 'https://sso.example.com',
      clientID: 'terdut',
      clientSecretRef: { name: 'sso-client', key: 'secret' },
    },
  });
  const missing = await waitForCondition(kube.admin, namespace, 'sso', {
    type: 'Available',
    status: 'False',
    reason: 'OIDCSecretMissing',
  });
  assert.match(
    conditionOf(missing, 'Available').message,
    new RegExp(
      `^Secret ${namespace}/sso-client \\(spec\\.oidc\\.clientSecretRef, key secret\\) does not exist`,
    ),
  );
  assert.equal(conditionOf(missing, 'Ready').reason, 'OIDCSecretMissing');
  assert.equal((await waitForEvent(kube.admin, namespace, 'OIDCSecretMissing')).type, 'Warning');
  // The Deployment is there: its pods start by themselves once the Secret exists.
  await waitForDeployment(kube.admin, namespace, 'sso');

  await createSecret(kube.admin, namespace, 'sso-client', { secret: 'client secret' });
  await waitForCondition(
    kube.admin,
    namespace,
    'sso',
    { type: 'Available', status: 'False', reason: 'ReplicasNotReady' },
    10_000,
  );
});

test('a rollout the Deployment controller gives up on (an image that never starts): Ready=False RolloutStuck with its message while the old replica serves, Ready again once the spec is corrected', async (t) => {
  const database = await createTestPostgres();
  databases.push(database);
  await createSecret(kube.admin, namespace, 'stuck-db', { DATABASE_URL: database.url });
  await createTerdutServer(kube.admin, namespace, 'stuck', { database: { secretRef: { name: 'stuck-db' } } });
  await waitForDeployment(kube.admin, namespace, 'stuck');
  const workload = await standIn.runDeployment(namespace, 'stuck');
  t.after(() => workload.stop());
  await waitForCondition(kube.admin, namespace, 'stuck', { type: 'Ready', status: 'True' });

  await kubeRequestOk(kube.admin, 'PATCH', tsPath('stuck'), {
    body: { spec: { image: 'registry.example/terdut-server:no-such-tag' } },
    contentType: 'application/merge-patch+json',
  });
  const deploymentPath = `/apis/apps/v1/namespaces/${namespace}/deployments/stuck`;
  let deployment: any;
  await waitUntil(
    async () => {
      deployment = await kubeRequestOk<any>(kube.admin, 'GET', deploymentPath);
      return deployment.spec.template.spec.containers[0].image.endsWith(':no-such-tag');
    },
    { timeoutMs: 10_000, describe: () => 'the Deployment did not get the new image' },
  );
  // What the Deployment controller writes once progressDeadlineSeconds pass
  // with the new ReplicaSet's pods never ready (the old one still serves).
  const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const gaveUp = 'ReplicaSet "stuck-7c9f8d" has timed out progressing.';
  await kubeRequestOk(kube.admin, 'PATCH', `${deploymentPath}/status`, {
    body: {
      status: {
        observedGeneration: deployment.metadata.generation,
        replicas: 2,
        updatedReplicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        unavailableReplicas: 1,
        conditions: [
          {
            type: 'Available',
            status: 'True',
            reason: 'MinimumReplicasAvailable',
            message: 'Deployment has minimum availability.',
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
          {
            type: 'Progressing',
            status: 'False',
            reason: 'ProgressDeadlineExceeded',
            message: gaveUp,
            lastUpdateTime: now,
            lastTransitionTime: now,
          },
        ],
      },
    },
    contentType: 'application/merge-patch+json',
  });
  const stuck = await waitForCondition(kube.admin, namespace, 'stuck', {
    type: 'Ready',
    status: 'False',
    reason: 'RolloutStuck',
  });
  const ready = conditionOf(stuck, 'Ready');
  assert.ok(ready.message.includes(gaveUp), ready.message);
  assert.match(ready.message, /kubectl -n \S+ describe deployment stuck/);
  assert.equal(conditionOf(stuck, 'Available').status, 'True', 'the old replica still serves');
  assert.equal((await argoCdHealth(stuck)).status, 'Degraded');
  const event = await waitForEvent(kube.admin, namespace, 'RolloutStuck');
  assert.equal(event.type, 'Warning');

  // Back to the image that runs: the new spec is not stuck (yet) and the server serves.
  await kubeRequestOk(kube.admin, 'PATCH', tsPath('stuck'), {
    body: { spec: { image: null } },
    contentType: 'application/merge-patch+json',
  });
  await waitForCondition(kube.admin, namespace, 'stuck', { type: 'Ready', status: 'True' });
});

test('a spec change whose Deployment an admission policy refuses (403, as Kyverno, Gatekeeper or a ValidatingAdmissionPolicy answer): Ready is not True for the new generation and says why, True again once the policy allows it', async (t) => {
  const database = await createTestPostgres();
  databases.push(database);
  await createSecret(kube.admin, namespace, 'policed-db', { DATABASE_URL: database.url });
  await createTerdutServer(kube.admin, namespace, 'policed', {
    database: { secretRef: { name: 'policed-db' } },
  });
  await waitForDeployment(kube.admin, namespace, 'policed');
  const workload = await standIn.runDeployment(namespace, 'policed');
  t.after(() => workload.stop());
  await waitForCondition(kube.admin, namespace, 'policed', { type: 'Ready', status: 'True' });

  const policy = `terdut-test-one-replica-${namespace}`;
  const policyPath = `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/${policy}`;
  const bindingPath = `/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/${policy}`;
  await kubeRequestOk(
    kube.admin,
    'POST',
    '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies',
    {
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicy',
        metadata: { name: policy },
        spec: {
          failurePolicy: 'Fail',
          matchConstraints: {
            resourceRules: [
              {
                apiGroups: ['apps'],
                apiVersions: ['v1'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['deployments'],
              },
            ],
          },
          validations: [
            {
              expression: '!has(object.spec.replicas) || object.spec.replicas <= 1',
              message: 'this namespace runs at most one replica per Deployment',
              reason: 'Forbidden',
            },
          ],
        },
      },
    },
  );
  t.after(() => kubeRequest(kube.admin, 'DELETE', policyPath));
  await kubeRequestOk(
    kube.admin,
    'POST',
    '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings',
    {
      body: {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingAdmissionPolicyBinding',
        metadata: { name: policy },
        spec: {
          policyName: policy,
          validationActions: ['Deny'],
          matchResources: {
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
          },
        },
      },
    },
  );
  t.after(() => kubeRequest(kube.admin, 'DELETE', bindingPath));
  const deploymentPath = `/apis/apps/v1/namespaces/${namespace}/deployments/policed`;
  await waitUntil(
    async () =>
      (
        await kubeRequest(kube.admin, 'PATCH', `${deploymentPath}?dryRun=All`, {
          body: { spec: { replicas: 2 } },
          contentType: 'application/merge-patch+json',
        })
      ).status === 403,
    { timeoutMs: 20_000, describe: () => 'the admission policy did not take effect' },
  );

  await kubeRequestOk(kube.admin, 'PATCH', tsPath('policed'), {
    body: { spec: { replicas: 2 } },
    contentType: 'application/merge-patch+json',
  });
  // What `kubectl wait --for=condition=Ready` reads: the condition for the current generation.
  let latest: any;
  await waitUntil(
    async () => {
      latest = await kubeRequestOk<any>(kube.admin, 'GET', tsPath('policed'));
      return conditionOf(latest, 'Ready')?.observedGeneration === latest.metadata.generation;
    },
    { timeoutMs: 20_000, describe: () => `Ready was not updated: ${JSON.stringify(latest?.status)}` },
  );
  await sleep(2000);
  latest = await kubeRequestOk<any>(kube.admin, 'GET', tsPath('policed'));
  const ready = conditionOf(latest, 'Ready');
  assert.notEqual(ready.status, 'True', `Ready=True for a spec that was never applied: ${ready.message}`);
  assert.equal(ready.status, 'Unknown');
  assert.match(ready.message, /this namespace runs at most one replica per Deployment/);
  assert.equal(latest.status.observedGeneration, latest.metadata.generation);

  await kubeRequestOk(kube.admin, 'DELETE', bindingPath);
  const allowed = await waitForCondition(kube.admin, namespace, 'policed', { type: 'Ready', status: 'True' });
  assert.equal(conditionOf(allowed, 'Ready').observedGeneration, allowed.metadata.generation);
  assert.equal((await kubeRequestOk<any>(kube.admin, 'GET', deploymentPath)).spec.replicas, 2);
});
