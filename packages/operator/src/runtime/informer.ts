/**
 * A list+watch informer: keeps an in-memory index of one resource type (in
 * all namespaces, or one) and tells the controller which objects changed.
 * Handlers receive objects only to map them to queue keys; the reconciler
 * re-reads what it acts on (see conventions: keys, not events).
 *
 * - Reports synced only after the first complete list.
 * - A watch the server ends (timeoutSeconds) resumes from the last
 *   resourceVersion; bookmarks keep that version fresh.
 * - 410 Gone (the version was compacted away) relists, and the handlers see
 *   the difference between the old index and the new list as events, so a
 *   deletion missed while disconnected is still delivered.
 * - Any other error restarts after a jittered, growing delay (up to 30 s), so
 *   many replicas do not hammer a recovering API server in lock-step.
 */
import { KubeApiError, type KubeClient, type KubeObject } from './kube-client.ts';

export type InformerEventType = 'added' | 'updated' | 'deleted';

export interface InformerOptions<T extends KubeObject> {
  /** For logs and metrics, e.g. `deployments`. */
  name: string;
  /** Collection path: `resourcePath(type)` for all namespaces or `resourcePath(type, ns)`. */
  path: string;
  labelSelector?: string;
  /**
   * Ask for PartialObjectMetadata only (no data, no spec): for Secrets the
   * operator must notice appearing without holding every Secret's contents.
   */
  metadataOnly?: boolean;
  /** `previous` is the indexed object an update replaced. */
  onEvent: (type: InformerEventType, object: T, previous?: T) => void;
  /** Logged, never thrown. */
  onError?: (error: unknown) => void;
  /** Server-side watch length; each watch gets a random length up to 2x this. Default 300 s. */
  watchTimeoutSeconds?: number;
}

const metadataAccept = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const metadataWatchAccept = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

const keyOf = (object: KubeObject): string =>
  object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;

export class Informer<T extends KubeObject> {
  readonly name: string;
  readonly #client: KubeClient;
  readonly #options: InformerOptions<T>;
  readonly #index = new Map<string, T>();
  #resourceVersion: string | undefined;
  #synced = false;
  readonly #syncWaiters: (() => void)[] = [];

  constructor(client: KubeClient, options: InformerOptions<T>) {
    this.#client = client;
    this.#options = options;
    this.name = options.name;
  }

  /** True once the first list has been indexed. */
  get synced(): boolean {
    return this.#synced;
  }

  /** Resolves after the first complete list. */
  waitForSync(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  /** The indexed object `namespace/name`. */
  get(key: string): T | undefined {
    return this.#index.get(key);
  }

  list(): T[] {
    return [...this.#index.values()];
  }

  /** Runs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!signal.aborted) {
      try {
        if (needList) {
          await this.#relist();
          needList = false;
        }
        await this.#watchOnce(signal);
        failures = 0;
      } catch (error) {
        if (signal.aborted) break;
        if (error instanceof KubeApiError && error.status === 410) {
          needList = true;
          continue;
        }
        this.#options.onError?.(error);
        failures += 1;
        // After an error we cannot know what was missed: list again.
        needList = true;
        await sleep(jitteredDelay(failures), signal);
      }
    }
  }

  async #relist(): Promise<void> {
    const query = { labelSelector: this.#options.labelSelector };
    const list = await this.#client.list<{ metadata: { resourceVersion: string }; items: T[] | null }>(
      this.#options.path,
      query,
      this.#options.metadataOnly ? metadataAccept : undefined,
    );
    const seen = new Set<string>();
    // An empty PartialObjectMetadataList arrives with `items: null`.
    for (const item of list.items ?? []) {
      const key = keyOf(item);
      seen.add(key);
      const old = this.#index.get(key);
      this.#index.set(key, item);
      if (!old) this.#options.onEvent('added', item);
      else if (old.metadata.resourceVersion !== item.metadata.resourceVersion)
        this.#options.onEvent('updated', item, old);
    }
    for (const [key, old] of this.#index) {
      if (!seen.has(key)) {
        this.#index.delete(key);
        this.#options.onEvent('deleted', old);
      }
    }
    this.#resourceVersion = list.metadata.resourceVersion;
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
    }
  }

  async #watchOnce(signal: AbortSignal): Promise<void> {
    const base = this.#options.watchTimeoutSeconds ?? 300;
    const timeoutSeconds = Math.round(base + Math.random() * base);
    await this.#client.watch<T>(
      this.#options.path,
      {
        labelSelector: this.#options.labelSelector,
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
      },
      (event) => {
        const object = event.object;
        if (object.metadata?.resourceVersion) this.#resourceVersion = object.metadata.resourceVersion;
        if (event.type === 'BOOKMARK') return;
        const key = keyOf(object);
        if (event.type === 'DELETED') {
          this.#index.delete(key);
          this.#options.onEvent('deleted', object);
        } else {
          const previous = this.#index.get(key);
          this.#index.set(key, object);
          if (previous) this.#options.onEvent('updated', object, previous);
          else this.#options.onEvent('added', object);
        }
      },
      {
        signal,
        accept: this.#options.metadataOnly ? metadataWatchAccept : undefined,
        inactivityTimeoutMs: (timeoutSeconds + 30) * 1000,
      },
    );
  }
}

/** 0.5–1.5 × min(30 s, 500 ms × 2^(failures-1)). */
export function jitteredDelay(failures: number): number {
  const base = Math.min(30_000, 500 * 2 ** Math.max(0, failures - 1));
  return Math.round(base * (0.5 + Math.random()));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
