/**
 * A real Kubernetes control plane for tests: etcd + kube-apiserver built from
 * source by `tools/build-peers.sh`, each on free loopback ports with its own
 * temp dir. What it lacks (no scheduler, kubelet, controllers) is written down
 * in ./README.md; ./kubelet-standin.ts fills the gaps tests need.
 *
 * @example
 *   const kube = await startKubeControlPlane();
 *   const res = await kube.request('GET', '/api/v1/namespaces');
 *   await kube.stop();
 */
import { spawnSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChildProcessGroup,
  freeLoopbackPort,
  peerBinary,
  retryOnPortConflict,
  waitUntil,
} from './child-processes.ts';

/** PEM material a client needs to talk to the API server as some identity. */
export interface KubeCredentials {
  server: string;
  ca: string;
  /** Client certificate + key (the admin), or a bearer token. */
  cert?: string;
  key?: string;
  token?: string;
}

export interface KubeResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON; throws with the body in the message when it is not JSON. */
  json<T = unknown>(): T;
}

export interface KubeRequestOptions {
  /** A JS value is sent as JSON; a string is sent as is (set `contentType`, e.g. YAML). */
  body?: unknown;
  contentType?: string;
  /** Authenticate with this bearer token instead of the admin client certificate. */
  token?: string;
  timeoutMs?: number;
}

export interface KubeControlPlane {
  /** `https://127.0.0.1:<port>` */
  server: string;
  /** A kubeconfig (inline certificates) for the `terdut-test-admin` user in `system:masters`. */
  kubeconfigPath: string;
  /** The temp dir holding certificates, etcd data and logs. */
  dir: string;
  admin: KubeCredentials;
  /** pids of etcd and kube-apiserver, for `kube:down`. */
  pids: number[];
  /** One HTTP request to the API server, as the admin unless `options.token` is given. */
  request(method: string, path: string, options?: KubeRequestOptions): Promise<KubeResponse>;
  /** Stops kube-apiserver and etcd and removes `dir` (unless `keepDir`). */
  stop(options?: { keepDir?: boolean }): Promise<void>;
}

export interface StartKubeOptions {
  /** Directory to use instead of a fresh temp dir (kube:up uses `.terdut-kube/`). */
  dir?: string;
  /** Outlive this process (kube:up); by default the control plane dies with it. */
  detached?: boolean;
  /** How long to wait for /readyz; the first start on a loaded 2-core machine can take ~20 s. */
  readyTimeoutMs?: number;
}

/** The service-account issuer the API server signs tokens for; also their default audience. */
export const serviceAccountIssuer = 'https://kubernetes.default.svc.cluster.local';

/**
 * Starts etcd and kube-apiserver with RBAC, service-account token signing and
 * the default admission plugins, waits until `/readyz` passes and writes a
 * kubeconfig. The processes are stopped by `stop()`, and also (through a
 * watchdog) if this process dies first, unless `detached` is set.
 */
export async function startKubeControlPlane(options: StartKubeOptions = {}): Promise<KubeControlPlane> {
  const etcdBin = peerBinary('etcd');
  const apiserverBin = peerBinary('kube-apiserver');
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'terdut-kube-'));
  mkdirSync(dir, { recursive: true });
  const pki = writePki(join(dir, 'pki'));
  return retryOnPortConflict(async () => {
    // A failed attempt's etcd member data names its old ports; start afresh.
    rmSync(join(dir, 'etcd-data'), { recursive: true, force: true });
    return launchControlPlane(dir, pki, etcdBin, apiserverBin, options);
  });
}

async function launchControlPlane(
  dir: string,
  pki: Pki,
  etcdBin: string,
  apiserverBin: string,
  options: StartKubeOptions,
): Promise<KubeControlPlane> {
  const group = new ChildProcessGroup({ detached: options.detached ?? false });
  try {
    const [etcdClientPort, etcdPeerPort, apiserverPort] = await distinctFreePorts(3);
    const etcdUrl = `http://127.0.0.1:${etcdClientPort}`;
    const etcdPeerUrl = `http://127.0.0.1:${etcdPeerPort}`;
    const etcd = group.spawn({
      name: 'etcd',
      command: etcdBin,
      logPath: join(dir, 'etcd.log'),
      args: [
        '--name=terdut-test',
        `--data-dir=${join(dir, 'etcd-data')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${etcdPeerUrl}`,
        `--initial-advertise-peer-urls=${etcdPeerUrl}`,
        `--initial-cluster=terdut-test=${etcdPeerUrl}`,
        // Test data is thrown away; fsync on every write only makes tests slow.
        '--unsafe-no-fsync',
        '--log-level=warn',
      ],
    });
    await waitUntil(
      async () => {
        const res = await fetch(`${etcdUrl}/health`, { signal: AbortSignal.timeout(1000) });
        return res.ok && ((await res.json()) as { health?: string }).health === 'true';
      },
      { timeoutMs: 30_000, child: etcd, describe: () => `etcd did not become healthy at ${etcdUrl}` },
    );

    const server = `https://127.0.0.1:${apiserverPort}`;
    const apiserver = group.spawn({
      name: 'kube-apiserver',
      command: apiserverBin,
      logPath: join(dir, 'kube-apiserver.log'),
      args: [
        `--etcd-servers=${etcdUrl}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${apiserverPort}`,
        `--cert-dir=${join(dir, 'apiserver-certs')}`,
        `--tls-cert-file=${pki.servingCert}`,
        `--tls-private-key-file=${pki.servingKey}`,
        `--client-ca-file=${pki.caCert}`,
        '--authorization-mode=RBAC',
        `--service-account-issuer=${serviceAccountIssuer}`,
        `--service-account-key-file=${pki.serviceAccountPublicKey}`,
        `--service-account-signing-key-file=${pki.serviceAccountPrivateKey}`,
        '--service-cluster-ip-range=10.96.0.0/16',
        // The endpoint reconciler would publish the advertise address as the
        // `kubernetes` Service's endpoint and refuses a loopback one; nothing
        // here routes to Services anyway.
        '--endpoint-reconciler-type=none',
        '--allow-privileged=true',
        // Nobody reads the pprof endpoints of a test cluster.
        '--profiling=false',
        '--v=1',
      ],
    });

    const admin: KubeCredentials = { server, ca: pki.caPem, cert: pki.adminCertPem, key: pki.adminKeyPem };
    let lastReadyz = '';
    await waitUntil(
      async () => {
        const res = await kubeRequest(admin, 'GET', '/readyz', { timeoutMs: 2000 });
        lastReadyz = `${res.status} ${res.text.slice(0, 300)}`;
        return res.status === 200;
      },
      {
        timeoutMs: options.readyTimeoutMs ?? 90_000,
        intervalMs: 200,
        child: apiserver,
        describe: () =>
          `kube-apiserver did not become ready at ${server}/readyz (last answer: ${lastReadyz || 'none'})`,
      },
    );

    const kubeconfigPath = join(dir, 'kubeconfig');
    writeFileSync(kubeconfigPath, kubeconfigYaml(admin), { mode: 0o600 });
    return {
      server,
      kubeconfigPath,
      dir,
      admin,
      pids: group.children.map((child) => child.process.pid ?? 0).filter((pid) => pid > 0),
      request: (method, path, requestOptions) => kubeRequest(admin, method, path, requestOptions),
      stop: async (stopOptions) => {
        await group.stop();
        if (!stopOptions?.keepDir && options.dir === undefined) rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    // The temp dir stays: the error names the log file in it.
    await group.stop(1000);
    throw error;
  }
}

/**
 * One request to a kube-apiserver with the given credentials (client
 * certificate or `options.token`). Uses node:https because global fetch cannot
 * present a client certificate without an extra dependency.
 */
export async function kubeRequest(
  credentials: KubeCredentials,
  method: string,
  path: string,
  options: KubeRequestOptions = {},
): Promise<KubeResponse> {
  const url = new URL(path, credentials.server);
  const token = options.token ?? credentials.token;
  let payload: string | undefined;
  let contentType = options.contentType;
  if (typeof options.body === 'string') payload = options.body;
  else if (options.body !== undefined) {
    payload = JSON.stringify(options.body);
    contentType ??= method === 'PATCH' ? 'application/merge-patch+json' : 'application/json';
  }
  const headers: Record<string, string> = { accept: 'application/json' };
  if (contentType) headers['content-type'] = contentType;
  if (payload !== undefined) headers['content-length'] = String(Buffer.byteLength(payload));
  if (token) headers.authorization = `Bearer ${token}`;

  return new Promise((resolveResponse, reject) => {
    const req = httpsRequest(
      url,
      {
        method,
        headers,
        ca: credentials.ca,
        // A bearer-token request must not also present the admin certificate:
        // the API server would authenticate the certificate first.
        ...(token ? {} : { cert: credentials.cert, key: credentials.key }),
        timeout: options.timeoutMs ?? 30_000,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolveResponse({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: <T>() => {
              try {
                return JSON.parse(text) as T;
              } catch {
                throw new Error(
                  `${method} ${path} answered ${res.statusCode} with a body that is not JSON: ${text.slice(0, 500)}`,
                );
              }
            },
          });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${url.href} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/**
 * Like `kubeRequest` but fails, with the API server's message, unless the
 * status is 2xx; returns the parsed JSON body.
 */
export async function kubeRequestOk<T = unknown>(
  credentials: KubeCredentials,
  method: string,
  path: string,
  options: KubeRequestOptions = {},
): Promise<T> {
  const res = await kubeRequest(credentials, method, path, options);
  if (res.status < 200 || res.status >= 300) {
    throw new Error(`${method} ${path} failed with ${res.status}: ${res.text.slice(0, 1000)}`);
  }
  return res.text === '' ? (undefined as T) : res.json<T>();
}

/** Credentials from a kubeconfig written by `startKubeControlPlane` (inline data only). */
export function credentialsFromKubeconfig(kubeconfigPath: string): KubeCredentials {
  const text = readFileSync(kubeconfigPath, 'utf8');
  const field = (name: string): string | undefined => {
    const match = new RegExp(`${name}: (\\S+)`).exec(text);
    return match?.[1];
  };
  const decode = (value: string | undefined): string | undefined =>
    value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  const server = field('server');
  const ca = decode(field('certificate-authority-data'));
  if (!server || !ca) throw new Error(`${kubeconfigPath} has no server or certificate-authority-data`);
  return {
    server,
    ca,
    cert: decode(field('client-certificate-data')),
    key: decode(field('client-key-data')),
  };
}

async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freeLoopbackPort());
  return [...ports];
}

interface Pki {
  caCert: string;
  caPem: string;
  servingCert: string;
  servingKey: string;
  adminCertPem: string;
  adminKeyPem: string;
  serviceAccountPublicKey: string;
  serviceAccountPrivateKey: string;
}

/**
 * A throw-away CA, the API server's serving certificate (for 127.0.0.1 and
 * the in-cluster names), an admin client certificate (O=system:masters, which
 * RBAC lets do anything) and the service-account signing key pair.
 */
function writePki(dir: string): Pki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = (name: string): string => join(dir, name);
  const openssl = (args: string[]): void => {
    const result = spawnSync('openssl', args, { encoding: 'utf8' });
    if (result.error)
      throw new Error(
        `openssl could not be run (${result.error.message}); install it: apt-get install -y openssl`,
      );
    if (result.status !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
  };
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

  openssl([
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    path('ca.key'),
    '-out',
    path('ca.crt'),
    '-days',
    '30',
    '-subj',
    '/CN=terdut-test-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  const signed = (name: string, subject: string, extensions: string[]): void => {
    openssl([
      'req',
      '-x509',
      ...ecKey,
      '-keyout',
      path(`${name}.key`),
      '-out',
      path(`${name}.crt`),
      '-days',
      '30',
      '-CA',
      path('ca.crt'),
      '-CAkey',
      path('ca.key'),
      '-subj',
      subject,
      '-addext',
      'basicConstraints=critical,CA:FALSE',
      '-addext',
      'keyUsage=critical,digitalSignature,keyEncipherment',
      ...extensions.flatMap((extension) => ['-addext', extension]),
    ]);
  };
  signed('apiserver', '/CN=kube-apiserver', [
    'extendedKeyUsage=serverAuth',
    'subjectAltName=IP:127.0.0.1,IP:10.96.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local',
  ]);
  signed('admin', '/O=system:masters/CN=terdut-test-admin', ['extendedKeyUsage=clientAuth']);

  const serviceAccount = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  writeFileSync(path('sa.pub'), serviceAccount.publicKey);
  writeFileSync(path('sa.key'), serviceAccount.privateKey, { mode: 0o600 });

  return {
    caCert: path('ca.crt'),
    caPem: readFileSync(path('ca.crt'), 'utf8'),
    servingCert: path('apiserver.crt'),
    servingKey: path('apiserver.key'),
    adminCertPem: readFileSync(path('admin.crt'), 'utf8'),
    adminKeyPem: readFileSync(path('admin.key'), 'utf8'),
    serviceAccountPublicKey: path('sa.pub'),
    serviceAccountPrivateKey: path('sa.key'),
  };
}

function kubeconfigYaml(admin: KubeCredentials): string {
  const b64 = (pem: string | undefined): string => Buffer.from(pem ?? '', 'utf8').toString('base64');
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    '  - name: terdut-test',
    '    cluster:',
    `      server: ${admin.server}`,
    `      certificate-authority-data: ${b64(admin.ca)}`,
    'users:',
    '  - name: terdut-test-admin',
    '    user:',
    `      client-certificate-data: ${b64(admin.cert)}`,
    `      client-key-data: ${b64(admin.key)}`,
    'contexts:',
    '  - name: terdut-test',
    '    context:',
    '      cluster: terdut-test',
    '      user: terdut-test-admin',
    'current-context: terdut-test',
    '',
  ].join('\n');
}
