/**
 * The kubelet stand-in does what the missing kubelet and Deployment
 * controller would, as far as terdut's tests rely on it: Deployment status,
 * env and mounted Secrets resolved through the API, Secret rotation reaching
 * the files, Services mapped to the process, and no process left behind.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { isProcessAlive, waitUntil } from './child-processes.ts';
import { kubeRequestOk, type KubeCredentials } from './kube.ts';
import {
  KubeletStandIn,
  expandDependentVariables,
  podCommand,
  rewriteMountedPaths,
} from './kubelet-standin.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from './peers-for-tests.ts';

// A stand-in "image": answers /readyz and reports its env and a file it is
// told to read, so the test sees exactly what the process was given.
const probeServer = `
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
createServer((req, res) => {
  if (req.url === '/readyz') return res.end('ok');
  const file = process.env.TOKEN_FILE;
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify({ env: process.env, token: readFileSync(file, 'utf8'), pid: process.pid }));
}).listen(Number(process.env.PORT), process.env.HOST);
`;

interface ProbeAnswer {
  env: Record<string, string>;
  token: string;
  pid: number;
}

let kube: KubeForTests;
let admin: KubeCredentials;
let probeServerPath: string;

before(async () => {
  kube = await kubeForTests();
  admin = kube.admin;
  probeServerPath = join(mkdtempSync(join(tmpdir(), 'terdut-probe-')), 'probe-server.mjs');
  writeFileSync(probeServerPath, probeServer);
});
after(async () => {
  await kube?.stop();
  if (probeServerPath !== undefined) rmSync(dirname(probeServerPath), { recursive: true, force: true });
});

function deployment(name: string, container: object, volumes: object[] = []): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'server', image: 'terdut-server:test', ...container }], volumes },
      },
    },
  };
}

interface DeploymentStatus {
  status?: {
    availableReplicas?: number;
    readyReplicas?: number;
    observedGeneration?: number;
    conditions?: { type: string; status: string }[];
  };
  metadata: { generation: number };
}

describe('KubeletStandIn', () => {
  test('markDeploymentAvailable makes a Deployment look rolled out', async () => {
    const namespace = await uniqueNamespace(admin, 'kubelet');
    await kubeRequestOk(admin, 'POST', `/apis/apps/v1/namespaces/${namespace}/deployments`, {
      body: deployment('web', {}),
    });
    const path = `/apis/apps/v1/namespaces/${namespace}/deployments/web`;
    const before = await kubeRequestOk<DeploymentStatus>(admin, 'GET', path);
    assert.equal(
      before.status?.availableReplicas,
      undefined,
      'nothing in the control plane rolls Deployments out',
    );

    await new KubeletStandIn(admin).markDeploymentAvailable(namespace, 'web');
    const after = await kubeRequestOk<DeploymentStatus>(admin, 'GET', path);
    assert.equal(after.status?.availableReplicas, 2);
    assert.equal(after.status?.readyReplicas, 2);
    assert.equal(after.status?.observedGeneration, after.metadata.generation);
    assert.equal(after.status?.conditions?.find((c) => c.type === 'Available')?.status, 'True');
  });

  test('runDeployment resolves env and mounted Secrets through the API and follows Secret rotation', async () => {
    const namespace = await uniqueNamespace(admin, 'kubelet');
    const secret = (token: string): object => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'terdut-credentials' },
      stringData: { token, 'database-url': 'postgres://terdut@db:5432/terdut' },
    });
    await kubeRequestOk(admin, 'POST', `/api/v1/namespaces/${namespace}/secrets`, {
      body: secret('first-token'),
    });
    await kubeRequestOk(admin, 'POST', `/api/v1/namespaces/${namespace}/services`, {
      body: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'terdut' },
        spec: { selector: { app: 'terdut' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
    await kubeRequestOk(admin, 'POST', `/apis/apps/v1/namespaces/${namespace}/deployments`, {
      body: deployment(
        'terdut',
        {
          env: [
            { name: 'TOKEN_FILE', value: '/etc/terdut/credentials/token' },
            {
              name: 'DATABASE_URL',
              valueFrom: { secretKeyRef: { name: 'terdut-credentials', key: 'database-url' } },
            },
            { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
            { name: 'GREETING', value: 'hello from $(POD_NAMESPACE)' },
          ],
          volumeMounts: [{ name: 'credentials', mountPath: '/etc/terdut/credentials', readOnly: true }],
          readinessProbe: { httpGet: { path: '/readyz', port: 8080 } },
        },
        [{ name: 'credentials', secret: { secretName: 'terdut-credentials' } }],
      ),
    });

    const kubelet = new KubeletStandIn(admin);
    try {
      const workload = await kubelet.runDeployment(namespace, 'terdut', {
        command: [process.execPath, probeServerPath],
      });
      assert.equal(kubelet.serviceUrls.get(`${namespace}/terdut`), workload.url);
      // A Service created after the pod started is followed too.
      await kubeRequestOk(admin, 'POST', `/api/v1/namespaces/${namespace}/services`, {
        body: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'terdut-late' },
          spec: { selector: { app: 'terdut' }, ports: [{ port: 80, targetPort: 8080 }] },
        },
      });
      await waitUntil(async () => kubelet.serviceUrls.get(`${namespace}/terdut-late`) === workload.url, {
        timeoutMs: 10_000,
        describe: () => 'a Service created after runDeployment was not mapped to the workload',
      });

      const ask = async (): Promise<ProbeAnswer> => (await (await fetch(workload.url)).json()) as ProbeAnswer;
      const first = await ask();
      assert.equal(first.env.DATABASE_URL, 'postgres://terdut@db:5432/terdut');
      assert.equal(first.env.POD_NAMESPACE, namespace);
      assert.equal(first.env.GREETING, `hello from ${namespace}`);
      assert.equal(first.env.PORT, String(workload.port));
      assert.notEqual(first.env.TOKEN_FILE, '/etc/terdut/credentials/token', 'the mount path is rewritten');
      assert.equal(first.token, 'first-token');

      const status = await kubeRequestOk<DeploymentStatus>(
        admin,
        'GET',
        `/apis/apps/v1/namespaces/${namespace}/deployments/terdut`,
      );
      assert.equal(status.status?.availableReplicas, 1);

      await kubeRequestOk(admin, 'PUT', `/api/v1/namespaces/${namespace}/secrets/terdut-credentials`, {
        body: secret('rotated-token'),
      });
      await waitUntil(async () => (await ask()).token === 'rotated-token', {
        timeoutMs: 10_000,
        describe: () => `the rotated Secret did not reach ${readFileSync(first.env.TOKEN_FILE!, 'utf8')}`,
      });

      await workload.stop();
      assert.equal(isProcessAlive(first.pid), false, 'the workload process outlived stop()');
      assert.equal(kubelet.serviceUrls.has(`${namespace}/terdut`), false);
      assert.equal(kubelet.serviceUrls.has(`${namespace}/terdut-late`), false);
    } finally {
      await kubelet.stop();
    }
  });

  test('runDeployment runs the real terdut-server from the pod template', async () => {
    const namespace = await uniqueNamespace(admin, 'kubelet');
    await kubeRequestOk(admin, 'POST', `/api/v1/namespaces/${namespace}/secrets`, {
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'terdut-bootstrap' },
        stringData: { token: 'b'.repeat(48) },
      },
    });
    await kubeRequestOk(admin, 'POST', `/apis/apps/v1/namespaces/${namespace}/deployments`, {
      body: deployment(
        'terdut',
        {
          env: [
            { name: 'TERDUT_DATA_DIR', value: '/var/lib/terdut' },
            { name: 'TERDUT_BOOTSTRAP_TOKEN_FILE', value: '/etc/terdut/bootstrap/token' },
            { name: 'LOG_LEVEL', value: 'warn' },
          ],
          volumeMounts: [
            { name: 'data', mountPath: '/var/lib/terdut' },
            { name: 'bootstrap', mountPath: '/etc/terdut/bootstrap', readOnly: true },
          ],
          readinessProbe: { httpGet: { path: '/readyz', port: 8080 } },
        },
        [
          { name: 'data', emptyDir: {} },
          { name: 'bootstrap', secret: { secretName: 'terdut-bootstrap' } },
        ],
      ),
    });
    const kubelet = new KubeletStandIn(admin);
    try {
      const workload = await kubelet.runDeployment(namespace, 'terdut');
      assert.equal(workload.env.TERDUT_DATA_DIR, workload.mounts['/var/lib/terdut']);
      assert.equal((await fetch(`${workload.url}/healthz`)).status, 200);
      const status = await kubeRequestOk<DeploymentStatus>(
        admin,
        'GET',
        `/apis/apps/v1/namespaces/${namespace}/deployments/terdut`,
      );
      assert.equal(status.status?.availableReplicas, 1);
    } finally {
      await kubelet.stop();
    }
  });

  test('runDeployment fails with the reason when a referenced Secret does not exist', async () => {
    const namespace = await uniqueNamespace(admin, 'kubelet');
    await kubeRequestOk(admin, 'POST', `/apis/apps/v1/namespaces/${namespace}/deployments`, {
      body: deployment('broken', {
        env: [{ name: 'X', valueFrom: { secretKeyRef: { name: 'missing', key: 'x' } } }],
      }),
    });
    await assert.rejects(
      new KubeletStandIn(admin).runDeployment(namespace, 'broken', {
        command: [process.execPath, probeServerPath],
      }),
      /secrets missing.*404/,
    );
  });

  test('paths into a mount are rewritten, $(VAR) is expanded and $$ escapes it', () => {
    const mounts = { '/etc/terdut': '/tmp/a', '/etc/terdut/tls': '/tmp/b' };
    assert.equal(rewriteMountedPaths('/etc/terdut/token', mounts), '/tmp/a/token');
    assert.equal(rewriteMountedPaths('/etc/terdut/tls/tls.crt', mounts), '/tmp/b/tls.crt');
    assert.equal(rewriteMountedPaths('/etc/terdutx/token', mounts), '/etc/terdutx/token');
    assert.equal(expandDependentVariables('$(A)-$$(A)-$(B)', { A: 'x' }), 'x-$(A)-$(B)');
  });

  test('a pod that mounts /tmp rewrites its own arguments but never the program path of a checkout under /tmp', () => {
    const mounts = { '/tmp': '/var/pods/p1/volumes/tmp' };
    const program = ['/usr/bin/node', '/tmp/my clone/packages/server/src/main.ts'];
    assert.deepEqual(podCommand({ args: ['serve', '--dump=/tmp/x'] }, mounts, program), [
      '/usr/bin/node',
      '/tmp/my clone/packages/server/src/main.ts',
      'serve',
      '--dump=/tmp/x',
    ]);
    assert.deepEqual(podCommand({ args: ['/tmp/x'] }, mounts, program).slice(2), [
      '/var/pods/p1/volumes/tmp/x',
    ]);
    assert.deepEqual(podCommand({}, mounts, program).slice(1), [
      '/tmp/my clone/packages/server/src/main.ts',
      'serve',
    ]);
  });
});
