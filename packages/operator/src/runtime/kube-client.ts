/**
 * The operator's adapter to the Kubernetes API. `@kubernetes/client-node`
 * loads the configuration and authenticates (kubeconfig, in-cluster
 * service-account token that it re-reads when rotated, exec plugins); the
 * requests themselves go through this small JSON transport so that the
 * reconciler speaks paths and plain objects, server-side apply is one call,
 * and every request is counted by verb (the steady-state test and the
 * benchmark read those counters).
 *
 * Watches are our own too: client-node's `Watch` aborts a watch after 30 s
 * without data, and a quiet watch is the normal state of a settled cluster.
 * Here the API server ends each watch cleanly after `timeoutSeconds` and the
 * informer resumes from the last resourceVersion.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createInterface } from 'node:readline';
import { KubeConfig } from '@kubernetes/client-node';
import {
  group as terdutGroup,
  plural as terdutPlural,
  version as terdutVersion,
} from '../api/v1alpha1/terdutserver.ts';
import { VERSION } from '../version.ts';

/** A non-2xx answer from the API server, with its `Status` reason and message. */
export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  /** The type of each of the Status's `details.causes` (e.g. `NamespaceTerminating`). */
  readonly causes: readonly string[];

  constructor(status: number, reason: string, message: string, causes: readonly string[] = []) {
    super(message);
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = reason;
    this.causes = causes;
  }
}

export const isNotFound = (error: unknown): boolean => error instanceof KubeApiError && error.status === 404;
export const isConflict = (error: unknown): boolean => error instanceof KubeApiError && error.status === 409;
/** 422: the object is invalid (a field the API server's validation refused). */
export const isInvalid = (error: unknown): boolean => error instanceof KubeApiError && error.status === 422;
export const isAlreadyExists = (error: unknown): boolean =>
  error instanceof KubeApiError && error.status === 409 && error.reason === 'AlreadyExists';
/**
 * 403 from the NamespaceLifecycle admission plugin: nothing new may be
 * created in a namespace being deleted (updates and deletes still pass).
 */
export const isNamespaceTerminating = (error: unknown): boolean =>
  error instanceof KubeApiError && error.status === 403 && error.causes.includes('NamespaceTerminating');

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';
export const writeVerbs: ReadonlySet<Verb> = new Set(['create', 'update', 'patch', 'delete']);

export interface KubeRequestObserver {
  (verb: Verb, resource: string, status: number): void;
}

export interface KubeObjectMeta {
  name: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  deletionTimestamp?: string;
  creationTimestamp?: string;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: KubeObjectMeta;
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

interface RequestSpec {
  verb: Verb;
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  accept?: string;
  timeoutMs?: number;
}

/** Where a resource lives: `/api/v1/...` for the core group, `/apis/<group>/<version>/...` otherwise. */
export interface ResourceType {
  group: string;
  version: string;
  plural: string;
  namespaced: boolean;
}

export const resources = {
  secrets: { group: '', version: 'v1', plural: 'secrets', namespaced: true },
  services: { group: '', version: 'v1', plural: 'services', namespaced: true },
  deployments: { group: 'apps', version: 'v1', plural: 'deployments', namespaced: true },
  leases: { group: 'coordination.k8s.io', version: 'v1', plural: 'leases', namespaced: true },
  events: { group: 'events.k8s.io', version: 'v1', plural: 'events', namespaced: true },
  httproutes: { group: 'gateway.networking.k8s.io', version: 'v1', plural: 'httproutes', namespaced: true },
  // From the API definition, so the CRD and the requests cannot disagree.
  terdutservers: { group: terdutGroup, version: terdutVersion, plural: terdutPlural, namespaced: true },
} satisfies Record<string, ResourceType>;

/**
 * `/apis/apps/v1/namespaces/ns/deployments/name` and friends. Without a
 * namespace the path is cluster-wide (list/watch in all namespaces).
 */
export function resourcePath(
  type: ResourceType,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  let path = type.group === '' ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  if (type.namespaced && namespace !== undefined) path += `/namespaces/${encodeURIComponent(namespace)}`;
  path += `/${type.plural}`;
  if (name !== undefined) path += `/${encodeURIComponent(name)}`;
  if (subresource !== undefined) path += `/${subresource}`;
  return path;
}

export interface KubeClientOptions {
  /** Called once per request (after the answer), e.g. to count API traffic. */
  observe?: KubeRequestObserver;
  /** Default per-request timeout (watches excluded). */
  timeoutMs?: number;
  /** Default `terdut-operator/<version> (<os>/<arch>) node/<version>`, as client-go's binary/version (os/arch). */
  userAgent?: string;
}

/**
 * The API server names the field manager of a write without `fieldManager`
 * after the User-Agent up to its first `/`, and audit logs show it: without
 * one, the finalizer, the status and every Secret were `unknown`'s in
 * `kubectl get --show-managed-fields`.
 */
export const defaultUserAgent = `terdut-operator/${VERSION} (${process.platform}/${process.arch}) node/${process.version}`;

/** JSON requests to one API server with the identity of a KubeConfig. */
export class KubeClient {
  readonly #config: KubeConfig;
  readonly #server: URL;
  #observers: KubeRequestObserver[] = [];
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  #signal: AbortSignal | undefined;

  constructor(config: KubeConfig, options: KubeClientOptions = {}) {
    const cluster = config.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster; set current-context');
    this.#config = config;
    this.#server = new URL(cluster.server);
    this.#timeoutMs = options.timeoutMs ?? 30_000;
    this.#userAgent = options.userAgent ?? defaultUserAgent;
    if (options.observe) this.#observers.push(options.observe);
  }

  /** In-cluster configuration when running in a pod, else `path` or $KUBECONFIG or ~/.kube/config. */
  static load(kubeconfigPath?: string, options: KubeClientOptions = {}): KubeClient {
    const config = new KubeConfig();
    if (kubeconfigPath) config.loadFromFile(kubeconfigPath);
    else config.loadFromDefault();
    return new KubeClient(config, options);
  }

  /** The same client whose requests `signal` aborts (one reconcile pass); observers are shared. */
  withSignal(signal: AbortSignal): KubeClient {
    const view = new KubeClient(this.#config, { timeoutMs: this.#timeoutMs, userAgent: this.#userAgent });
    view.#observers = this.#observers;
    view.#signal = signal;
    return view;
  }

  /** Adds a request observer (metrics, test counters). */
  onRequest(observer: KubeRequestObserver): void {
    this.#observers.push(observer);
  }

  /** The object, or undefined on 404. */
  async get<T>(path: string, query?: RequestSpec['query']): Promise<T | undefined> {
    try {
      return await this.#json<T>({ verb: 'get', method: 'GET', path, query });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async list<T>(path: string, query?: RequestSpec['query'], accept?: string): Promise<T> {
    return this.#json<T>({ verb: 'list', method: 'GET', path, query, accept });
  }

  async create<T>(path: string, body: unknown): Promise<T> {
    return this.#json<T>({ verb: 'create', method: 'POST', path, body });
  }

  /** PUT; with `metadata.resourceVersion` set this is an optimistic-concurrency write (409 on conflict). */
  async update<T>(path: string, body: unknown): Promise<T> {
    return this.#json<T>({ verb: 'update', method: 'PUT', path, body });
  }

  /** JSON merge patch (RFC 7386). */
  async mergePatch<T>(path: string, patch: unknown): Promise<T> {
    return this.#json<T>({
      verb: 'patch',
      method: 'PATCH',
      path,
      body: patch,
      contentType: 'application/merge-patch+json',
    });
  }

  /**
   * Server-side apply: `object` states every field `fieldManager` owns; fields
   * it stops stating are removed. `force` takes fields over from other
   * managers (the operator is the authority on what it manages).
   */
  async apply<T>(path: string, object: unknown, fieldManager: string, force = true): Promise<T> {
    return this.#json<T>({
      verb: 'patch',
      method: 'PATCH',
      path,
      query: { fieldManager, force },
      body: object,
      // JSON is YAML, so the apply content type takes a JSON body.
      contentType: 'application/apply-patch+yaml',
    });
  }

  /** Deletes; true when it existed. */
  async delete(path: string, query?: RequestSpec['query']): Promise<boolean> {
    try {
      await this.#json({ verb: 'delete', method: 'DELETE', path, query });
      return true;
    } catch (error) {
      if (isNotFound(error)) return false;
      throw error;
    }
  }

  /** Whether the API server serves `group/version` (discovery). */
  async servesGroupVersion(group: string, version: string): Promise<boolean> {
    return (await this.get<unknown>(`/apis/${group}/${version}`)) !== undefined;
  }

  /**
   * One watch request: calls `onEvent` for each event until the server ends
   * the watch (resolves), the signal aborts (resolves), or an error happens
   * (rejects; a 410 Gone arrives as a KubeApiError with status 410).
   */
  async watch<T>(
    path: string,
    query: Record<string, string | number | boolean | undefined>,
    onEvent: (event: WatchEvent<T>) => void,
    options: { signal: AbortSignal; accept?: string; inactivityTimeoutMs: number },
  ): Promise<void> {
    const res = await this.#send(
      {
        verb: 'watch',
        method: 'GET',
        path,
        query: { ...query, watch: true },
        accept: options.accept,
        timeoutMs: options.inactivityTimeoutMs,
      },
      options.signal,
    );
    if (res.statusCode !== 200) {
      const text = await readBody(res);
      throw statusError(res.statusCode ?? 0, text, `watch ${path}`);
    }
    await new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      let failed = false;
      const fail = (error: Error): void => {
        if (failed) return;
        failed = true;
        res.destroy();
        reject(error);
      };
      lines.on('line', (line) => {
        if (line.trim() === '') return;
        let event: WatchEvent<T>;
        try {
          event = JSON.parse(line) as WatchEvent<T>;
        } catch {
          fail(new Error(`watch ${path}: a line that is not JSON: ${line.slice(0, 200)}`));
          return;
        }
        if (event.type === 'ERROR') {
          const status = event.object as { code?: number; reason?: string; message?: string };
          fail(
            new KubeApiError(status.code ?? 500, status.reason ?? 'Unknown', status.message ?? 'watch error'),
          );
          return;
        }
        try {
          onEvent(event);
        } catch (error) {
          fail(error as Error);
        }
      });
      lines.on('close', () => {
        if (!failed) resolve();
      });
      res.on('error', (error) => (options.signal.aborted ? resolve() : fail(error)));
      // A destroyed response does not always end the readline interface, so
      // stopping resolves here rather than waiting for its 'close'.
      const onAbort = (): void => {
        failed = true;
        res.destroy();
        resolve();
      };
      if (options.signal.aborted) onAbort();
      else options.signal.addEventListener('abort', onAbort, { once: true });
      lines.on('close', () => options.signal.removeEventListener('abort', onAbort));
    });
  }

  async #json<T>(spec: RequestSpec): Promise<T> {
    const res = await this.#send(spec, this.#signal);
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) throw statusError(status, text, `${spec.method} ${spec.path}`);
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }

  async #send(spec: RequestSpec, signal?: AbortSignal): Promise<IncomingMessage> {
    const url = new URL(this.#server.href.replace(/\/+$/, '') + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const options: RequestOptions & { headers: Record<string, string> } = {
      method: spec.method,
      headers: { accept: spec.accept ?? 'application/json', 'user-agent': this.#userAgent },
    };
    if (payload !== undefined) {
      options.headers['content-type'] = spec.contentType ?? 'application/json';
      options.headers['content-length'] = String(Buffer.byteLength(payload));
    }
    await this.#config.applyToHTTPSOptions(options);
    const timeoutMs = spec.timeoutMs ?? this.#timeoutMs;
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    const resource = resourceOf(spec.path);
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = send(url, { ...options, signal }, (res) => {
        for (const observe of this.#observers) observe(spec.verb, resource, res.statusCode ?? 0);
        resolve(res);
      });
      // An inactivity timeout: for a watch it fires only when the server
      // stops sending even the end of its own timeoutSeconds.
      req.setTimeout(timeoutMs, () =>
        req.destroy(
          new Error(`${spec.method} ${spec.path}: no answer from the API server in ${timeoutMs} ms`),
        ),
      );
      req.on('error', (error) => {
        for (const observe of this.#observers) observe(spec.verb, resource, 0);
        reject(error);
      });
      req.end(payload);
    });
  }
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (chunk: Buffer) => chunks.push(chunk));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function statusError(status: number, text: string, what: string): KubeApiError {
  try {
    const body = JSON.parse(text) as {
      reason?: string;
      message?: string;
      // A StatusCause's type is serialised as `reason` (metav1.StatusCause).
      details?: { causes?: { reason?: string }[] };
    };
    return new KubeApiError(
      status,
      body.reason ?? 'Unknown',
      `${what}: ${body.message ?? text.slice(0, 300)}`,
      (body.details?.causes ?? []).flatMap((cause) => (cause.reason ? [cause.reason] : [])),
    );
  } catch {
    return new KubeApiError(status, 'Unknown', `${what}: ${status} ${text.slice(0, 300)}`);
  }
}

/** `deployments`, `terdutservers/status`, ... from a request path, for metrics labels. */
export function resourceOf(path: string): string {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  // /api/v1/... or /apis/group/version/...
  let rest = parts[0] === 'api' ? parts.slice(2) : parts.slice(3);
  if (rest[0] === 'namespaces' && rest.length >= 3) rest = rest.slice(2);
  if (rest.length === 0) return parts[0] === 'apis' && parts.length <= 3 ? 'discovery' : 'unknown';
  return rest.length >= 3 ? `${rest[0]}/${rest[2]}` : (rest[0] ?? 'unknown');
}
