/**
 * A stand-in for the parts of a cluster that the test control plane lacks
 * (see ./README.md): no scheduler, kubelet or controller-manager runs, so a
 * Deployment never gets Pods and its status never changes by itself.
 *
 * Two levels of pretending, pick the smallest a test needs:
 * - `markDeploymentAvailable` writes the status a healthy rollout would have
 *   (through the status subresource, as the Deployment controller would).
 * - `runDeployment` starts the real terdut-server process from the
 *   Deployment's pod template -- env and mounted Secrets resolved through the
 *   API -- on a loopback port, waits for its readiness probe, then marks the
 *   Deployment available. Mounted Secrets are kept in sync while it runs, as
 *   the kubelet does, so token rotation through a Secret works; env from
 *   Secrets is, as in a real Pod, read once at start.
 *
 * @example
 *   const kubelet = new KubeletStandIn(kube.admin);
 *   const server = await kubelet.runDeployment('team-a', 'terdut');
 *   kubelet.serviceUrls.get('team-a/terdut'); // 'http://127.0.0.1:41234'
 *   await kubelet.stop();
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  ChildProcessGroup,
  freeLoopbackPort,
  logTail,
  repoRoot,
  waitUntil,
  type StartedChild,
} from './child-processes.ts';
import { kubeRequest, kubeRequestOk, type KubeCredentials } from './kube.ts';

// The slices of the Kubernetes objects this stand-in reads.
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}
interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
  readOnlyRootFilesystem?: boolean;
  allowPrivilegeEscalation?: boolean;
  capabilities?: { drop?: string[]; add?: string[] };
}
interface Container {
  name: string;
  image?: string;
  securityContext?: SecurityContext;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: {
    prefix?: string;
    secretRef?: { name: string; optional?: boolean };
    configMapRef?: { name: string; optional?: boolean };
  }[];
  volumeMounts?: { name: string; mountPath: string; subPath?: string; readOnly?: boolean }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path?: string; port?: number | string } };
}
interface Volume {
  name: string;
  secret?: { secretName: string; items?: { key: string; path: string }[]; optional?: boolean };
  configMap?: { name: string; items?: { key: string; path: string }[]; optional?: boolean };
  emptyDir?: object;
}
interface Deployment {
  metadata: { name: string; namespace: string; generation?: number };
  spec: {
    replicas?: number;
    template: {
      metadata?: { labels?: Record<string, string> };
      spec: { containers: Container[]; volumes?: Volume[]; securityContext?: SecurityContext };
    };
  };
}
interface KeyedObject {
  metadata: { resourceVersion?: string };
  data?: Record<string, string>;
}
interface Service {
  metadata: { name: string; namespace: string };
  spec: { selector?: Record<string, string> };
}

export interface RunDeploymentOptions {
  /** Which container of the pod template to run; default: the first. */
  container?: string;
  /** The program and arguments to run instead of the image, taken as they are (they are paths on this machine, never rewritten into the pod's volumes); default: this repository's terdut-server (`node packages/server/src/main.ts` + the container's args, else `serve`). */
  command?: string[];
  /** Extra environment, applied last (e.g. LOG_LEVEL). */
  env?: Record<string, string>;
  /** How long to wait for the readiness probe. */
  readyTimeoutMs?: number;
  /**
   * Run the pod template as a real container with podman instead of this
   * checkout's program: its image (or `image`), env, mounted Secrets (kept in
   * sync), args, user and group, read-only root, dropped capabilities and
   * no-new-privileges, on the host network (PORT and HOST still point it at a
   * free loopback port). The image must be in podman's local storage.
   */
  podman?: { image?: string };
}

export interface RunningWorkload {
  namespace: string;
  deployment: string;
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The environment the process was started with (after resolution). */
  env: Record<string, string>;
  /** Where each mounted volume lives on this machine: mountPath -> local dir. */
  mounts: Record<string, string>;
  logPath: string;
  /** The podman container's name, when it runs as one (`options.podman`). */
  container?: string;
  /** Stops the process; the Deployment's status is left as it was. */
  stop(): Promise<void>;
}

/**
 * The terdut-server image's entrypoint is `packages/server/bin/terdut-server`
 * (the built server); here the same server runs from its sources, `node
 * packages/server/src/main.ts`, so the operator's tests need no build. Its
 * default argument is `serve`; the container's `args` replace the
 * latter, as in a real Pod. A container `command` names a program inside
 * the image, which cannot run here, so it is ignored.
 *
 * Only the pod template's own values (its `args`, its env) are paths inside
 * the pod and get rewritten into the pod's volumes; the program path is a
 * path on this machine and is kept as it is -- the checkout may well live
 * under a directory the pod mounts (`/tmp`, for one).
 */
export function podCommand(
  container: Pick<Container, 'args'>,
  mounts: Record<string, string>,
  program: string[] = [process.execPath, join(repoRoot, 'packages', 'server', 'src', 'main.ts')],
): string[] {
  return [...program, ...(container.args ?? ['serve']).map((arg) => rewriteMountedPaths(arg, mounts))];
}

/**
 * The kubelet stand-in for one test control plane. Create one per test (or
 * per file) and `stop()` it at the end.
 */
export class KubeletStandIn {
  readonly #admin: KubeCredentials;
  readonly #workloads = new Map<string, RunningWorkload>();
  /**
   * `namespace/serviceName` -> `http://127.0.0.1:port` for every Service whose
   * selector matches a running workload: the hook through which an operator
   * under test reaches "the Service".
   */
  readonly serviceUrls = new Map<string, string>();

  constructor(admin: KubeCredentials) {
    this.#admin = admin;
  }

  /**
   * Writes the status the Deployment controller would after a successful
   * rollout of `replicas` (default `spec.replicas`, else 1): ready, available,
   * updated, `observedGeneration` current, `Available` and `Progressing` true.
   */
  async markDeploymentAvailable(namespace: string, name: string, replicas?: number): Promise<void> {
    const deployment = await kubeRequestOk<Deployment>(this.#admin, 'GET', deploymentPath(namespace, name));
    const count = replicas ?? deployment.spec.replicas ?? 1;
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await kubeRequestOk(this.#admin, 'PATCH', `${deploymentPath(namespace, name)}/status`, {
      body: {
        status: {
          observedGeneration: deployment.metadata.generation,
          replicas: count,
          updatedReplicas: count,
          readyReplicas: count,
          availableReplicas: count,
          unavailableReplicas: null,
          conditions: [
            condition('Available', 'MinimumReplicasAvailable', 'Deployment has minimum availability.', now),
            condition(
              'Progressing',
              'NewReplicaSetAvailable',
              `ReplicaSet "${name}" has successfully progressed.`,
              now,
            ),
          ],
        },
      },
    });
  }

  /**
   * Starts the Deployment's container as a local process (see the file
   * comment), waits until its readiness probe (default `/readyz`) answers
   * 200, registers the matching Services in `serviceUrls` and marks the
   * Deployment available with one replica.
   */
  async runDeployment(
    namespace: string,
    name: string,
    options: RunDeploymentOptions = {},
  ): Promise<RunningWorkload> {
    const key = `${namespace}/${name}`;
    await this.#workloads.get(key)?.stop();
    const deployment = await kubeRequestOk<Deployment>(this.#admin, 'GET', deploymentPath(namespace, name));
    const podSpec = deployment.spec.template.spec;
    const container = options.container
      ? podSpec.containers.find((c) => c.name === options.container)
      : podSpec.containers[0];
    if (!container) {
      throw new Error(
        `Deployment ${key} has no container ${options.container ?? '(none at all)'}; pass options.container`,
      );
    }

    const dir = mkdtempSync(join(tmpdir(), `terdut-pod-${namespace}-${name}-`));
    const mounts: Record<string, string> = {};
    const readOnlyMounts = new Set<string>();
    const secretSyncs: SecretVolumeSync[] = [];
    // Until the program runs, a failure (a missing Secret, a bad volume) must not leave the directory behind.
    let spawned = false;
    try {
      const security = { ...podSpec.securityContext, ...container.securityContext };
      // In a container the volumes belong to the pod's user (the kubelet's fsGroup does the same).
      const owner =
        options.podman && security.runAsUser !== undefined
          ? { uid: security.runAsUser, gid: security.fsGroup ?? security.runAsGroup ?? security.runAsUser }
          : undefined;
      for (const mount of container.volumeMounts ?? []) {
        const volume = podSpec.volumes?.find((v) => v.name === mount.name);
        if (!volume)
          throw new Error(`Deployment ${key}: volumeMount ${mount.name} names no volume of the pod`);
        const local = join(dir, 'volumes', mount.name);
        mkdirSync(local, { recursive: true });
        if (owner) chownSync(local, owner.uid, owner.gid);
        mounts[mount.mountPath] = mount.subPath ? join(local, mount.subPath) : local;
        if (mount.readOnly) readOnlyMounts.add(mount.mountPath);
        if (volume.secret) {
          const sync = new SecretVolumeSync(
            this.#admin,
            namespace,
            'secrets',
            volume.secret.secretName,
            volume.secret.items,
            local,
            owner,
          );
          await sync.syncOnce(volume.secret.optional ?? false);
          secretSyncs.push(sync);
        } else if (volume.configMap) {
          const sync = new SecretVolumeSync(
            this.#admin,
            namespace,
            'configmaps',
            volume.configMap.name,
            volume.configMap.items,
            local,
            owner,
          );
          await sync.syncOnce(volume.configMap.optional ?? false);
          secretSyncs.push(sync);
        } else if (!volume.emptyDir) {
          throw new Error(
            `Deployment ${key}: volume ${volume.name} is neither a Secret, a ConfigMap nor an emptyDir; the stand-in cannot provide it`,
          );
        }
      }
      // In a container the paths are real; only a local process needs them rewritten.
      const rewrite = (value: string): string =>
        options.podman ? value : rewriteMountedPaths(value, mounts);

      const port = await freeLoopbackPort();
      const env: Record<string, string> = {};
      for (const [envName, value] of Object.entries(await this.#resolveEnv(namespace, name, container)))
        env[envName] = rewrite(value);
      Object.assign(env, { PORT: String(port), HOST: '127.0.0.1' }, options.env ?? {});

      const containerName = `terdut-standin-${namespace}-${name}-${port}`.slice(0, 63);
      const image = options.podman?.image ?? container.image;
      if (options.podman && !image)
        throw new Error(`Deployment ${key}: container ${container.name} names no image`);
      // options.command replaces the image (program and arguments), so none of it is a pod path.
      const [command, ...args] = options.podman
        ? podmanRunCommand({
            name: containerName,
            image: image!,
            container,
            security,
            env,
            mounts,
            readOnlyMounts,
          })
        : (options.command ?? podCommand(container, mounts));
      if (!command) throw new Error('options.command is empty');
      const group = new ChildProcessGroup();
      const child: StartedChild = group.spawn({
        name: `${key} (${container.name})`,
        command,
        args,
        cwd: dir,
        logPath: join(dir, 'output.log'),
        // Only what the pod would have, plus PATH so `node` resolves.
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
      });
      spawned = true;
      for (const sync of secretSyncs) sync.start();

      const url = `http://127.0.0.1:${port}`;
      const timers: { services?: NodeJS.Timeout } = {};
      const stop = async (): Promise<void> => {
        clearInterval(timers.services);
        for (const sync of secretSyncs) sync.stop();
        // podman forwards the SIGTERM to the container (the kubelet's stop); allow its graceful shutdown.
        await group.stop(options.podman ? 30_000 : 5000);
        if (options.podman) await removeContainer(containerName);
        this.#workloads.delete(key);
        for (const [serviceKey, serviceUrl] of this.serviceUrls)
          if (serviceUrl === url) this.serviceUrls.delete(serviceKey);
        rmSync(dir, { recursive: true, force: true });
      };
      const readinessPath = container.readinessProbe?.httpGet?.path ?? '/readyz';
      try {
        await waitUntil(
          async () =>
            (await fetch(`${url}${readinessPath}`, { signal: AbortSignal.timeout(1000) })).status === 200,
          {
            timeoutMs: options.readyTimeoutMs ?? 120_000,
            intervalMs: 200,
            child,
            describe: () => `${key} did not answer 200 on ${url}${readinessPath}`,
          },
        );
      } catch (error) {
        const log = logTail(child.logPath, 30);
        await stop();
        throw new Error(`${(error as Error).message}\nits output:\n${log}`, { cause: error });
      }

      const workload: RunningWorkload = {
        namespace,
        deployment: name,
        url,
        port,
        env,
        mounts,
        logPath: child.logPath,
        ...(options.podman ? { container: containerName } : {}),
        stop,
      };
      this.#workloads.set(key, workload);
      // Like the EndpointSlice controller, keep following the Services that
      // select the pod: one the operator creates (or changes) later still maps.
      const labels = deployment.spec.template.metadata?.labels ?? {};
      const refreshServices = async (): Promise<void> => {
        const services = await kubeRequestOk<{ items: Service[] }>(
          this.#admin,
          'GET',
          `/api/v1/namespaces/${namespace}/services`,
        );
        if (!this.#workloads.has(key) || this.#workloads.get(key) !== workload) return;
        for (const service of services.items) {
          const serviceKey = `${namespace}/${service.metadata.name}`;
          const selector = service.spec.selector ?? {};
          const matches =
            Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);
          if (matches) this.serviceUrls.set(serviceKey, url);
          else if (this.serviceUrls.get(serviceKey) === url) this.serviceUrls.delete(serviceKey);
        }
      };
      await refreshServices();
      let refreshing = false;
      timers.services = setInterval(() => {
        if (refreshing) return;
        refreshing = true;
        refreshServices()
          .catch(() => {
            // A transient API error; the next tick retries.
          })
          .finally(() => {
            refreshing = false;
          });
      }, 500);
      timers.services.unref();
      await this.markDeploymentAvailable(namespace, name, 1);
      return workload;
    } finally {
      if (!spawned) {
        for (const sync of secretSyncs) sync.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }

  /** The running workload of `namespace/deployment`, if any. */
  workload(namespace: string, deployment: string): RunningWorkload | undefined {
    return this.#workloads.get(`${namespace}/${deployment}`);
  }

  /** Stops every workload this stand-in started. */
  async stop(): Promise<void> {
    await Promise.all([...this.#workloads.values()].map((workload) => workload.stop()));
  }

  async #resolveEnv(
    namespace: string,
    podName: string,
    container: Container,
  ): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    const objectData = async (
      kind: 'secrets' | 'configmaps',
      objectName: string,
      optional: boolean,
    ): Promise<Record<string, string> | undefined> => {
      const res = await kubeRequest(
        this.#admin,
        'GET',
        `/api/v1/namespaces/${namespace}/${kind}/${objectName}`,
      );
      if (res.status === 404 && optional) return undefined;
      if (res.status !== 200) {
        // A real Pod would sit in CreateContainerConfigError; fail loudly instead.
        throw new Error(
          `the pod of ${namespace}/${podName} needs ${kind} ${objectName}, which answers ${res.status}: ${res.text.slice(0, 300)}`,
        );
      }
      const data = res.json<KeyedObject>().data ?? {};
      return kind === 'secrets'
        ? Object.fromEntries(
            Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
          )
        : data;
    };

    for (const source of container.envFrom ?? []) {
      const ref = source.secretRef ?? source.configMapRef;
      if (!ref) continue;
      const data = await objectData(
        source.secretRef ? 'secrets' : 'configmaps',
        ref.name,
        ref.optional ?? false,
      );
      for (const [k, v] of Object.entries(data ?? {})) env[`${source.prefix ?? ''}${k}`] = v;
    }
    for (const variable of container.env ?? []) {
      if (variable.value !== undefined) {
        env[variable.name] = expandDependentVariables(variable.value, env);
        continue;
      }
      const from = variable.valueFrom;
      const keyRef = from?.secretKeyRef ?? from?.configMapKeyRef;
      if (keyRef) {
        const data = await objectData(
          from?.secretKeyRef ? 'secrets' : 'configmaps',
          keyRef.name,
          keyRef.optional ?? false,
        );
        const value = data?.[keyRef.key];
        if (value !== undefined) env[variable.name] = value;
        else if (!(keyRef.optional ?? false)) {
          throw new Error(
            `env ${variable.name} of ${namespace}/${podName}: key ${keyRef.key} is missing in ${keyRef.name}`,
          );
        }
      } else if (from?.fieldRef) {
        const field = from.fieldRef.fieldPath;
        const value = {
          'metadata.namespace': namespace,
          'metadata.name': `${podName}-standin`,
          'status.podIP': '127.0.0.1',
        }[field];
        if (value === undefined)
          throw new Error(`env ${variable.name}: fieldRef ${field} is not provided by the kubelet stand-in`);
        env[variable.name] = value;
      } else {
        env[variable.name] = '';
      }
    }
    return env;
  }
}

/**
 * Keeps a local directory in step with a Secret's (or ConfigMap's) keys, like
 * the kubelet's volume manager: files are replaced atomically (write + rename)
 * so a reader never sees half a token.
 */
class SecretVolumeSync {
  readonly #admin: KubeCredentials;
  readonly #path: string;
  readonly #kind: 'secrets' | 'configmaps';
  readonly #items: { key: string; path: string }[] | undefined;
  readonly #dir: string;
  readonly #owner: { uid: number; gid: number } | undefined;
  #resourceVersion: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #syncing = false;

  constructor(
    admin: KubeCredentials,
    namespace: string,
    kind: 'secrets' | 'configmaps',
    name: string,
    items: { key: string; path: string }[] | undefined,
    dir: string,
    owner?: { uid: number; gid: number },
  ) {
    this.#admin = admin;
    this.#owner = owner;
    this.#kind = kind;
    this.#path = `/api/v1/namespaces/${namespace}/${kind}/${name}`;
    this.#items = items;
    this.#dir = dir;
  }

  async syncOnce(optional: boolean): Promise<void> {
    const res = await kubeRequest(this.#admin, 'GET', this.#path);
    if (res.status === 404 && optional) return;
    if (res.status !== 200)
      throw new Error(`mounted ${this.#path} answers ${res.status}: ${res.text.slice(0, 300)}`);
    const object = res.json<KeyedObject>();
    if (object.metadata.resourceVersion === this.#resourceVersion) return;
    this.#resourceVersion = object.metadata.resourceVersion;
    const data = object.data ?? {};
    const entries = this.#items
      ? this.#items.map((item) => [item.path, data[item.key]] as const)
      : Object.entries(data);
    for (const [file, encoded] of entries) {
      if (encoded === undefined) continue;
      const content =
        this.#kind === 'secrets' ? Buffer.from(encoded, 'base64') : Buffer.from(encoded, 'utf8');
      const target = join(this.#dir, file);
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(`${target}.tmp`, content, { mode: 0o600 });
      if (this.#owner) chownSync(`${target}.tmp`, this.#owner.uid, this.#owner.gid);
      renameSync(`${target}.tmp`, target);
    }
  }

  /** Re-reads every 500 ms: the real kubelet is slower (up to a minute), tests need not wait that long. */
  start(): void {
    this.#timer = setInterval(() => {
      if (this.#syncing) return;
      this.#syncing = true;
      this.syncOnce(true)
        .catch(() => {
          // A transient API error: the next tick retries, as the kubelet would.
        })
        .finally(() => {
          this.#syncing = false;
        });
    }, 500);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}

/**
 * `podman run` for one container of a pod template, in the foreground (the
 * stand-in's process group owns it; SIGTERM to podman reaches the container).
 */
export function podmanRunCommand(pod: {
  name: string;
  image: string;
  container: Pick<Container, 'args' | 'command'>;
  security: SecurityContext;
  env: Record<string, string>;
  mounts: Record<string, string>;
  readOnlyMounts: Set<string>;
}): string[] {
  const { security } = pod;
  const args = ['podman', 'run', '--rm', '--name', pod.name, '--network=host', '--pull=never'];
  if (security.runAsUser !== undefined)
    args.push('--user', `${security.runAsUser}:${security.runAsGroup ?? security.runAsUser}`);
  if (security.fsGroup !== undefined) args.push('--group-add', String(security.fsGroup));
  if (security.readOnlyRootFilesystem) args.push('--read-only', '--read-only-tmpfs=false');
  for (const capability of security.capabilities?.drop ?? [])
    args.push(`--cap-drop=${capability.toLowerCase()}`);
  for (const capability of security.capabilities?.add ?? [])
    args.push(`--cap-add=${capability.toLowerCase()}`);
  if (security.allowPrivilegeEscalation === false) args.push('--security-opt', 'no-new-privileges');
  for (const [mountPath, local] of Object.entries(pod.mounts))
    args.push('--volume', `${local}:${mountPath}${pod.readOnlyMounts.has(mountPath) ? ':ro' : ''}`);
  for (const [name, value] of Object.entries(pod.env)) args.push('--env', `${name}=${value}`);
  if (pod.container.command?.length) args.push('--entrypoint', JSON.stringify(pod.container.command));
  args.push(pod.image, ...(pod.container.args ?? []));
  return args;
}

async function removeContainer(name: string): Promise<void> {
  await promisify(execFile)('podman', ['rm', '--force', '--volumes', '--time', '5', name], {
    timeout: 30_000,
  }).catch(() => {});
}

/** Replaces a leading mount path (`/etc/terdut/token` -> `<tmp>/volumes/x/token`). Longest mount wins. */
export function rewriteMountedPaths(value: string, mounts: Record<string, string>): string {
  const mountPaths = Object.keys(mounts).sort((a, b) => b.length - a.length);
  for (const mountPath of mountPaths) {
    const trimmed = mountPath.replace(/\/+$/, '');
    if (value === trimmed || value.startsWith(`${trimmed}/`))
      return `${mounts[mountPath]}${value.slice(trimmed.length)}`;
  }
  return value;
}

/** Kubernetes' `$(VAR)` expansion of env values (`$$(VAR)` escapes it). */
export function expandDependentVariables(value: string, env: Record<string, string>): string {
  return value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (match, name: string | undefined) => {
    if (match === '$$') return '$';
    return name !== undefined && env[name] !== undefined ? env[name] : match;
  });
}

function deploymentPath(namespace: string, name: string): string {
  return `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`;
}

function condition(type: string, reason: string, message: string, now: string): Record<string, string> {
  return { type, status: 'True', reason, message, lastUpdateTime: now, lastTransitionTime: now };
}
