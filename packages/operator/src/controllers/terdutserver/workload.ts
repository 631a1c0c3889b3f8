/**
 * Step 4: the Deployment and the Service, server-side applied under one field
 * manager with owner references (garbage collection removes them with the
 * TerdutServer). The object stated here is the whole desired state: a field
 * removed from it is removed from the cluster by the next apply.
 */
import { isInvalid, resourcePath, resources } from '../../runtime/kube-client.ts';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { refusedServerSettings } from './server-settings.ts';
import {
  stop,
  type Deployment,
  type EnvVar,
  type Pass,
  type ReconcileDeps,
  type StepResult,
} from './context.ts';
import {
  commonLabels,
  fieldManager,
  oidcSecretMountPath,
  ownerReference,
  selectorLabels,
  serverPort,
  serviceUrl,
  tokenMountPath,
  tokenSecretKey,
  tokenSecretName,
  workloadName,
} from './names.ts';

/** Where gateway pods run in most clusters: the private ranges (spec.networking.trustedProxies overrides). */
export const defaultTrustedProxies = ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'uniquelocal'];

/** How long a stopping pod keeps serving while it is taken out of the Service's endpoints. */
const preStopSeconds = 5;

/** The desired Deployment. `databaseEnv` comes from the database step. */
export function desiredDeployment(server: TerdutServer, image: string, databaseEnv: EnvVar[]): Deployment {
  const { spec } = server;
  const env: EnvVar[] = [
    { name: 'PORT', value: String(serverPort) },
    { name: 'TERDUT_BOOTSTRAP_TOKEN_FILE', value: `${tokenMountPath}/${tokenSecretKey}` },
    ...databaseEnv,
  ];
  if (spec.timezone) env.push({ name: 'TERDUT_TIMEZONE', value: spec.timezone });
  const publicUrl =
    spec.publicURL ?? (spec.networking?.hostname ? `https://${spec.networking.hostname}` : undefined);
  if (publicUrl) env.push({ name: 'TERDUT_PUBLIC_URL', value: publicUrl });
  // Behind the HTTPRoute every request comes from the gateway: without this
  // the server would rate-limit and audit every client as the gateway.
  const trustedProxies = spec.networking?.hostname
    ? (spec.networking.trustedProxies ?? defaultTrustedProxies)
    : [];
  if (trustedProxies.length > 0)
    env.push({ name: 'TERDUT_TRUSTED_PROXIES', value: trustedProxies.join(',') });
  const volumes: unknown[] = [
    {
      name: 'bootstrap-token',
      secret: {
        secretName: tokenSecretName(server),
        items: [{ key: tokenSecretKey, path: tokenSecretKey }],
        defaultMode: 0o400,
      },
    },
    { name: 'tmp', emptyDir: {} },
  ];
  // No subPath: a subPath mount never sees a rotated Secret.
  const volumeMounts: unknown[] = [
    { name: 'bootstrap-token', mountPath: tokenMountPath, readOnly: true },
    { name: 'tmp', mountPath: '/tmp' },
  ];
  if (spec.oidc) {
    env.push(
      { name: 'TERDUT_OIDC_ISSUER_URL', value: spec.oidc.issuerURL },
      { name: 'TERDUT_OIDC_CLIENT_ID', value: spec.oidc.clientID },
    );
    if (spec.oidc.allowedGroups?.length)
      env.push({ name: 'TERDUT_OIDC_ALLOWED_GROUPS', value: spec.oidc.allowedGroups.join(',') });
    if (spec.oidc.adminGroups?.length)
      env.push({ name: 'TERDUT_OIDC_ADMIN_GROUPS', value: spec.oidc.adminGroups.join(',') });
    const ref = spec.oidc.clientSecretRef;
    if (ref) {
      env.push({ name: 'TERDUT_OIDC_CLIENT_SECRET_FILE', value: `${oidcSecretMountPath}/client-secret` });
      volumes.push({
        name: 'oidc-client-secret',
        secret: {
          secretName: ref.name,
          items: [{ key: ref.key, path: 'client-secret' }],
          defaultMode: 0o400,
        },
      });
      volumeMounts.push({ name: 'oidc-client-secret', mountPath: oidcSecretMountPath, readOnly: true });
    }
  }
  const probe = (path: string, periodSeconds: number, failureThreshold: number) => ({
    httpGet: { path, port: 'http' },
    periodSeconds,
    failureThreshold,
    timeoutSeconds: 2,
  });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: workloadName(server),
      namespace: server.metadata.namespace,
      labels: commonLabels(server),
      ownerReferences: [ownerReference(server)],
    },
    spec: {
      replicas: spec.replicas,
      selector: { matchLabels: selectorLabels(server) },
      template: {
        metadata: { labels: commonLabels(server) },
        spec: {
          automountServiceAccountToken: false,
          // The pre-stop pause, then up to 25 s for the server to finish requests in flight.
          terminationGracePeriodSeconds: preStopSeconds + 30,
          enableServiceLinks: false,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 10001,
            runAsGroup: 10001,
            fsGroup: 10001,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [
            {
              name: 'terdut-server',
              image: spec.image,
              ports: [{ name: 'http', containerPort: serverPort, protocol: 'TCP' }],
              env,
              volumeMounts,
              // The server listens only once its migrations are applied, which on a large
              // database can take minutes after an upgrade. Liveness alone (30 s) killed it
              // mid-migration, rolling the migration back, again on every restart.
              startupProbe: probe('/healthz', 5, 120),
              livenessProbe: probe('/healthz', 10, 3),
              readinessProbe: probe('/readyz', 5, 2),
              // Endpoints and gateways learn that a pod is going a moment after it is told to
              // stop; a server that closed its listener at once refused the requests sent
              // meanwhile (a rollout's connection errors). It keeps serving 5 s first.
              lifecycle: { preStop: { sleep: { seconds: preStopSeconds } } },
              ...(spec.resources ? { resources: spec.resources } : {}),
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ['ALL'] },
              },
            },
          ],
          volumes,
        },
      },
    },
  } as Deployment;
}

export function desiredService(server: TerdutServer): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: workloadName(server),
      namespace: server.metadata.namespace,
      labels: commonLabels(server),
      ownerReferences: [ownerReference(server)],
    },
    spec: {
      type: 'ClusterIP',
      selector: selectorLabels(server),
      ports: [{ name: 'http', port: serverPort, targetPort: 'http', protocol: 'TCP' }],
    },
  };
}

export async function reconcileWorkload(
  deps: Pick<ReconcileDeps, 'kube' | 'failpoint' | 'defaultImage' | 'events' | 'cachedSecret'>,
  pass: Pass,
): Promise<StepResult> {
  const { server, conditions } = pass;
  const namespace = server.metadata.namespace;
  const name = workloadName(server);
  const image = server.spec.image ?? deps.defaultImage;
  const withImage = { ...server, spec: { ...server.spec, image } };
  // Settings the server would refuse at start-up: pods that only crash-loop
  // help nobody, and a running Deployment keeps its last good settings.
  const refused = refusedServerSettings(server.spec);
  if (refused !== undefined) {
    const message = `${refused}; terdut-server would not start with it. Correct the TerdutServer's spec; the operator retries when it changes`;
    conditions.set('Available', 'False', 'ServerSettingsInvalid', message);
    if (conditions.changed('Available'))
      await deps.events.record(server, 'Warning', 'ServerSettingsInvalid', message);
    return stop();
  }
  let deployment: Deployment;
  try {
    deployment = await deps.kube.apply<Deployment>(
      resourcePath(resources.deployments, namespace, name),
      desiredDeployment(withImage, image, pass.databaseEnv ?? []),
      fieldManager,
    );
  } catch (error) {
    // A spec the CRD schema lets through but Deployment validation refuses
    // (requests above limits, an unknown resource name): retrying cannot fix
    // it, a person must change the TerdutServer, and its update wakes it.
    if (!isInvalid(error)) throw error;
    const refusal = (error as Error).message.replace(/^[A-Z]+ \S+: /, '');
    const message = `the API server refused Deployment ${namespace}/${name} made from this TerdutServer's spec: ${refusal}; correct the TerdutServer's spec (spec.resources, spec.image, ...), the operator retries when it changes`;
    conditions.set('Available', 'False', 'DeploymentInvalid', message);
    if (conditions.changed('Available'))
      await deps.events.record(server, 'Warning', 'DeploymentInvalid', message);
    return stop();
  }
  await deps.kube.apply(
    resourcePath(resources.services, namespace, name),
    desiredService(server),
    fieldManager,
  );
  deps.failpoint('workload');
  pass.deployment = deployment;
  pass.status.url ??= serviceUrl(server);
  pass.status.replicas = deployment.status?.replicas ?? 0;
  pass.status.selector = Object.entries(selectorLabels(server))
    .map(([label, value]) => `${label}=${value}`)
    .join(',');

  const available = deployment.status?.availableReplicas ?? 0;
  const oidcSecret = oidcSecretMissing(deps, server);
  if (server.spec.replicas === 0) {
    conditions.set(
      'Available',
      'False',
      'ScaledToZero',
      'spec.replicas is 0; set it to 1 or more to run the server',
    );
  } else if (available > 0) {
    conditions.set(
      'Available',
      'True',
      'MinimumReplicasAvailable',
      `${available} of ${server.spec.replicas} replicas available`,
    );
    const stuck = stuckRollout(deployment);
    if (stuck !== undefined) {
      // The replicas that are available still serve, so Available stays
      // True; Ready says that the spec asked for is not what runs.
      pass.rolloutStuck = `the rollout of Deployment ${namespace}/${name} is stuck (${stuck}); ${available} of ${server.spec.replicas} replicas serve meanwhile. Check its new pods (kubectl -n ${namespace} describe deployment ${name}), then correct the TerdutServer's spec (spec.image, spec.resources, ...) or the cluster`;
      const before = server.status?.conditions?.find((condition) => condition.type === 'Ready');
      if (before?.reason !== ROLLOUT_STUCK)
        await deps.events.record(server, 'Warning', ROLLOUT_STUCK, pass.rolloutStuck);
    }
  } else if (oidcSecret !== undefined) {
    // The pods mount the client secret, so the kubelet cannot start them
    // without it; "check its pods" would send a person to find that out.
    const message = `${oidcSecret}, so the pods of Deployment ${namespace}/${name} cannot start (they mount it): create it, or correct spec.oidc.clientSecretRef. They start when it appears`;
    conditions.set('Available', 'False', 'OIDCSecretMissing', message);
    if (conditions.changed('Available'))
      await deps.events.record(server, 'Warning', 'OIDCSecretMissing', message);
  } else {
    conditions.set(
      'Available',
      'False',
      'ReplicasNotReady',
      `no replica of Deployment ${namespace}/${name} is ready yet; if this lasts, check its pods (kubectl -n ${namespace} describe deployment ${name})`,
    );
  }
  return undefined;
}

/**
 * What is missing when spec.oidc.clientSecretRef names a Secret that does
 * not exist (from the watch cache: no request), else undefined. The watch
 * wakes the TerdutServer when it appears (watches.ts).
 */
function oidcSecretMissing(
  deps: Pick<ReconcileDeps, 'cachedSecret'>,
  server: TerdutServer,
): string | undefined {
  const ref = server.spec.oidc?.clientSecretRef;
  if (!ref || deps.cachedSecret(server.metadata.namespace, ref.name)) return undefined;
  return `Secret ${server.metadata.namespace}/${ref.name} (spec.oidc.clientSecretRef, key ${ref.key}) does not exist`;
}

/** Ready's reason while the Deployment controller reports the current spec's rollout as stuck. */
export const ROLLOUT_STUCK = 'RolloutStuck';

/**
 * The Deployment controller's message when it gave up on rolling out the
 * Deployment's current spec (`Progressing=False`, `ProgressDeadlineExceeded`
 * after `progressDeadlineSeconds`), else undefined. A status older than the
 * spec (observedGeneration behind) speaks of an earlier spec and is ignored.
 */
export function stuckRollout(deployment: Deployment): string | undefined {
  const status = deployment.status;
  if (status?.observedGeneration !== deployment.metadata.generation) return undefined;
  const progressing = status?.conditions?.find((condition) => condition.type === 'Progressing');
  if (progressing?.status !== 'False' || progressing.reason !== 'ProgressDeadlineExceeded') return undefined;
  return progressing.message?.slice(0, 300) || 'ProgressDeadlineExceeded';
}
