/**
 * The in-process kubelet of the operator benchmark and the steady-state test: for every Deployment the operator creates, starts
 * a REAL terdut-server (`buildApp` from packages/server/src/app.ts, the same
 * assembly `main.ts serve` runs) inside this process on a loopback port,
 * configured from the pod template as the kubelet would (env values, the
 * DATABASE_URL Secret reference, the mounted bootstrap-token Secret), then
 * publishes its URL in the operator's overrides file and marks the
 * Deployment available through the test stand-in. Many servers share this
 * process (a child process each would not fit 100 on two cores); each has its
 * own PostgreSQL database.
 */
import { renameSync, writeFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../packages/server/src/app.ts';
import { loadConfig } from '../../packages/server/src/config.ts';
import { openPostgres, type Database } from '../../packages/server/src/db/database.ts';
import { migrate } from '../../packages/server/src/db/migrate.ts';
import { kubeRequest, kubeRequestOk, type KubeCredentials } from '../peers/kube.ts';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string } };
}
interface DeploymentItem {
  metadata: { name: string; namespace: string };
  spec: {
    template: {
      spec: {
        containers: { env?: EnvVar[]; volumeMounts?: { name: string; mountPath: string }[] }[];
        volumes?: { name: string; secret?: { secretName: string } }[];
      };
    };
  };
  status?: { availableReplicas?: number };
}

interface RunningServer {
  app: FastifyInstance;
  db: Database;
  url: string;
}

export class InProcessKubelet {
  readonly #admin: KubeCredentials;
  readonly #overridesFile: string;
  readonly #standIn: KubeletStandIn;
  readonly #servers = new Map<string, RunningServer>();
  readonly #starting = new Set<string>();
  readonly errors: string[] = [];
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  constructor(admin: KubeCredentials, overridesFile: string) {
    this.#admin = admin;
    this.#overridesFile = overridesFile;
    this.#standIn = new KubeletStandIn(admin);
    writeFileSync(overridesFile, '');
  }

  get running(): number {
    return this.#servers.size;
  }

  /** Lists Deployments cluster-wide every `intervalMs` and starts servers for new ones, `parallel` at a time. */
  start(intervalMs = 500, parallel = 4): void {
    this.#timer = setInterval(() => {
      if (this.#polling) return;
      this.#polling = true;
      this.#poll(parallel)
        .catch((error: unknown) => this.errors.push(`poll: ${(error as Error).message}`))
        .finally(() => {
          this.#polling = false;
        });
    }, intervalMs);
  }

  /** Stops looking for new Deployments (servers keep running). */
  pause(): void {
    clearInterval(this.#timer);
  }

  async stop(): Promise<void> {
    this.pause();
    await Promise.all(
      [...this.#servers.values()].map(async (server) => {
        await server.app.close().catch(() => {});
        await server.db.close().catch(() => {});
      }),
    );
    this.#servers.clear();
  }

  async #poll(parallel: number): Promise<void> {
    const list = await kubeRequestOk<{ items: DeploymentItem[] }>(
      this.#admin,
      'GET',
      '/apis/apps/v1/deployments',
    );
    const pending = list.items.filter((d) => {
      const key = `${d.metadata.namespace}/${d.metadata.name}`;
      return !this.#servers.has(key) && !this.#starting.has(key);
    });
    for (let i = 0; i < pending.length; i += parallel) {
      await Promise.all(pending.slice(i, i + parallel).map((deployment) => this.#run(deployment)));
    }
  }

  async #run(deployment: DeploymentItem): Promise<void> {
    const { namespace, name } = deployment.metadata;
    const key = `${namespace}/${name}`;
    this.#starting.add(key);
    try {
      const pod = deployment.spec.template.spec;
      const container = pod.containers[0]!;
      const secretValue = async (secretName: string, secretKey: string): Promise<string> => {
        const res = await kubeRequest(
          this.#admin,
          'GET',
          `/api/v1/namespaces/${namespace}/secrets/${secretName}`,
        );
        if (res.status !== 200) throw new Error(`${key} needs Secret ${secretName}: ${res.status}`);
        const data = res.json<{ data?: Record<string, string> }>().data ?? {};
        const value = data[secretKey];
        if (value === undefined) throw new Error(`${key}: Secret ${secretName} has no key ${secretKey}`);
        return Buffer.from(value, 'base64').toString('utf8');
      };
      const env: Record<string, string> = {};
      for (const variable of container.env ?? []) {
        if (variable.value !== undefined) env[variable.name] = variable.value;
        const ref = variable.valueFrom?.secretKeyRef;
        if (ref) env[variable.name] = await secretValue(ref.name, ref.key);
      }
      // The token file lives in a mounted Secret: read that Secret's key
      // instead of a file (no rotation happens in this benchmark).
      const tokenFile = env.TERDUT_BOOTSTRAP_TOKEN_FILE;
      if (tokenFile) {
        const mount = (container.volumeMounts ?? []).find((m) => tokenFile.startsWith(`${m.mountPath}/`));
        const secretName = pod.volumes?.find((v) => v.name === mount?.name)?.secret?.secretName;
        if (!mount || !secretName) throw new Error(`${key}: no Secret volume holds ${tokenFile}`);
        env.TERDUT_BOOTSTRAP_TOKEN = await secretValue(
          secretName,
          tokenFile.slice(mount.mountPath.length + 1),
        );
        delete env.TERDUT_BOOTSTRAP_TOKEN_FILE;
      }
      Object.assign(env, { PORT: '0', HOST: '127.0.0.1' });
      const config = loadConfig(env);
      if (!config.databaseUrl) throw new Error(`${key}: the pod has no DATABASE_URL`);
      // Two connections per server: 100 servers stay under the cluster's max_connections.
      const db = await openPostgres(config.databaseUrl, { max: 2 });
      await migrate(db);
      const app = await buildApp({ db, config });
      const address = await app.listen({ port: 0, host: '127.0.0.1' });
      this.#servers.set(key, { app, db, url: address });
      this.#writeOverrides();
      await this.#standIn.markDeploymentAvailable(namespace, name, 1);
    } catch (error) {
      this.errors.push(`${key}: ${(error as Error).message}`);
    } finally {
      this.#starting.delete(key);
    }
  }

  /** The operator names its Service like its Deployment (workloadName), so one line per server. */
  #writeOverrides(): void {
    const lines = [...this.#servers].map(([key, server]) => `${key}=${server.url}`);
    writeFileSync(`${this.#overridesFile}.tmp`, `${lines.join('\n')}\n`);
    renameSync(`${this.#overridesFile}.tmp`, this.#overridesFile);
  }
}
