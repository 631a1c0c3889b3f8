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

export const operatorNamespace = 'terdut-system';
const tsPath = (ns: string, name = '') =>
  `/apis/terdut.ryuvia.com/v1alpha1/namespaces/${ns}/terdutservers${name ? `/${name}` : ''}`;

/** Creates the operator namespace (once per control plane; AlreadyExists is fine). */
export async function ensureNamespace(admin: KubeCredentials, name: string): Promise<void> {
  const res = await kubeRequest(admin, 'POST', '/api/v1/namespaces', {
    body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
  });
  if (res.status !== 201 && res.status !== 409)
    throw new Error(`creating namespace ${name}: ${res.status} ${res.text}`);
}

export async function createTerdutServer(
  admin: KubeCredentials,
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
): Promise<any> {
  return kubeRequestOk(admin, 'POST', tsPath(namespace), {
    body: { apiVersion: 'terdut.ryuvia.com/v1alpha1', kind: 'TerdutServer', metadata: { name }, spec },
  });
}

export async function getTerdutServer(admin: KubeCredentials, namespace: string, name: string): Promise<any> {
  const res = await kubeRequest(admin, 'GET', tsPath(namespace, name));
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new Error(`GET TerdutServer ${namespace}/${name}: ${res.status} ${res.text}`);
  return res.json<any>();
}

export function conditionOf(server: any, type: string): any {
  return server?.status?.conditions?.find((c: any) => c.type === type);
}

/** Waits until condition `type` has `status` (and `reason`, if given); the error shows all conditions. */
export async function waitForCondition(
  admin: KubeCredentials,
  namespace: string,
  name: string,
  expected: { type: string; status: string; reason?: string | RegExp },
  timeoutMs = 60_000,
): Promise<any> {
  let last: any;
  await waitUntil(
    async () => {
      last = await getTerdutServer(admin, namespace, name);
      const condition = conditionOf(last, expected.type);
      return (
        condition?.status === expected.status &&
        (expected.reason === undefined ||
          (typeof expected.reason === 'string'
            ? condition.reason === expected.reason
            : expected.reason.test(String(condition.reason))))
      );
    },
    {
      timeoutMs,
      intervalMs: 200,
      describe: () =>
        `TerdutServer ${namespace}/${name} did not reach ${expected.type}=${expected.status}${expected.reason ? ` (${String(expected.reason)})` : ''}; conditions: ${JSON.stringify(last?.status?.conditions ?? [], null, 1)}`,
    },
  );
  return last;
}

/** A Secret with string data. */
export async function createSecret(
  admin: KubeCredentials,
  namespace: string,
  name: string,
  stringData: Record<string, string>,
): Promise<void> {
  await kubeRequestOk(admin, 'POST', `/api/v1/namespaces/${namespace}/secrets`, {
    body: { apiVersion: 'v1', kind: 'Secret', metadata: { name }, stringData },
  });
}

export async function getSecret(admin: KubeCredentials, namespace: string, name: string): Promise<any> {
  const res = await kubeRequest(admin, 'GET', `/api/v1/namespaces/${namespace}/secrets/${name}`);
  if (res.status === 404) return undefined;
  return res.json<any>();
}

export async function listSecrets(
  admin: KubeCredentials,
  namespace: string,
  labelSelector?: string,
): Promise<any[]> {
  const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : '';
  return (await kubeRequestOk<any>(admin, 'GET', `/api/v1/namespaces/${namespace}/secrets${query}`)).items;
}

export const secretValue = (secret: any, key: string): string | undefined =>
  secret?.data?.[key] === undefined ? undefined : Buffer.from(secret.data[key], 'base64').toString('utf8');

export async function listEvents(admin: KubeCredentials, namespace: string): Promise<any[]> {
  return (await kubeRequestOk<any>(admin, 'GET', `/apis/events.k8s.io/v1/namespaces/${namespace}/events`))
    .items;
}

export async function waitForEvent(
  admin: KubeCredentials,
  namespace: string,
  reason: string,
  timeoutMs = 60_000,
): Promise<any> {
  let found: any;
  let seen: string[] = [];
  await waitUntil(
    async () => {
      const events = await listEvents(admin, namespace);
      seen = events.map((e) => e.reason);
      found = events.find((e) => e.reason === reason);
      return found !== undefined;
    },
    {
      timeoutMs,
      intervalMs: 200,
      describe: () => `no ${reason} event in ${namespace} (seen: ${seen.join(', ') || 'none'})`,
    },
  );
  return found;
}

/** Waits until the Deployment exists (the operator created it). */
export async function waitForDeployment(
  admin: KubeCredentials,
  namespace: string,
  name: string,
  timeoutMs = 30_000,
): Promise<any> {
  let deployment: any;
  await waitUntil(
    async () => {
      const res = await kubeRequest(
        admin,
        'GET',
        `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`,
      );
      if (res.status !== 200) return false;
      deployment = res.json<any>();
      return true;
    },
    { timeoutMs, intervalMs: 100, describe: () => `Deployment ${namespace}/${name} was not created` },
  );
  return deployment;
}

const plurals: Record<string, string> = {
  Namespace: 'namespaces',
  CustomResourceDefinition: 'customresourcedefinitions',
  ServiceAccount: 'serviceaccounts',
  ClusterRole: 'clusterroles',
  ClusterRoleBinding: 'clusterrolebindings',
  Role: 'roles',
  RoleBinding: 'rolebindings',
  Deployment: 'deployments',
  Secret: 'secrets',
  TerdutServer: 'terdutservers',
  postgresql: 'postgresqls',
};

/** apiVersion, kind, name and namespace of one YAML document (block style, as in deploy/). */
export function yamlIdentity(doc: string): {
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
} {
  const unquote = (value: string | undefined) => value?.trim().replace(/^["']|["']$/g, '');
  const top = (field: string) => unquote(new RegExp(`^${field}:\\s*(.+)$`, 'm').exec(doc)?.[1]);
  const lines = doc.split('\n');
  const start = lines.findIndex((line) => /^metadata:\s*$/.test(line));
  const meta: Record<string, string> = {};
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) break;
    const match = /^ {2}(name|namespace):\s*(.+)$/.exec(line);
    if (match) meta[match[1]!] = unquote(match[2])!;
  }
  return { apiVersion: top('apiVersion')!, kind: top('kind')!, name: meta.name!, namespace: meta.namespace };
}

/** Server-side applies every document of a YAML file (as the test admin); returns what was applied. */
export async function applyYamlFile(
  admin: KubeCredentials,
  path: string,
): Promise<{ kind: string; name: string }[]> {
  const applied: { kind: string; name: string }[] = [];
  for (const doc of readFileSync(path, 'utf8').split(/^---\s*$/m)) {
    if (!/^kind:/m.test(doc)) continue;
    const { apiVersion, kind, name, namespace } = yamlIdentity(doc);
    const plural = plurals[kind];
    if (!plural) throw new Error(`${path}: no plural known for kind ${kind}`);
    const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const url = `${base}${namespace ? `/namespaces/${namespace}` : ''}/${plural}/${name}?fieldManager=terdut-tests&force=true`;
    await kubeRequestOk(admin, 'PATCH', url, { body: doc, contentType: 'application/apply-patch+yaml' });
    applied.push({ kind, name });
  }
  return applied;
}
