/**
 * The transport of the terdut client: one JSON request with an explicit
 * timeout, errors as `TerdutApiError` (the server's status and its `error`
 * message) or `TerdutNetworkError` (no answer at all).
 */

/** The server answered with a non-2xx status. `message` is the server's `{"error": ...}` text. */
export class TerdutApiError extends Error {
  readonly status: number;
  readonly method: string;
  readonly path: string;
  /** From a 429's or 503's Retry-After header (seconds), when the server sent one. */
  readonly retryAfterSeconds: number | undefined;

  constructor(status: number, message: string, method: string, path: string, retryAfterSeconds?: number) {
    super(`${method} ${path} answered ${status}: ${message}`);
    this.name = 'TerdutApiError';
    this.status = status;
    this.method = method;
    this.path = path;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** The server's own message, without the request prefix. */
  get serverMessage(): string {
    return this.message.replace(/^\S+ \S+ answered \d+: /, '');
  }
}

/** No HTTP answer: connection refused, DNS failure, reset, or the timeout expired. */
export class TerdutNetworkError extends Error {
  readonly method: string;
  readonly path: string;

  constructor(method: string, path: string, cause: unknown) {
    const reason =
      cause instanceof Error && cause.name === 'TimeoutError'
        ? 'timed out'
        : String((cause as { cause?: { code?: string } })?.cause?.code ?? (cause as Error)?.message ?? cause);
    super(`${method} ${path}: no answer from the server (${reason})`, { cause });
    this.name = 'TerdutNetworkError';
    this.method = method;
    this.path = path;
  }
}

/**
 * Whether retrying the same request later can succeed without anyone
 * changing anything.
 *
 * Retried: network errors and timeouts (the pod may be starting, restarting
 * or between rollouts), 5xx (a server fault or a database that is briefly
 * unreachable; the contract reserves 5xx for those) and 429 (rate limited:
 * the bootstrap endpoints are, and the limit clears with time).
 *
 * Not retried: 401 and 403 mean the credential or the state is wrong (a wrong
 * bootstrap token, an instance already bootstrapped) and will stay wrong
 * until something else changes, so the caller must take a different path
 * (recover, rotate) instead of hammering. 409 is a state conflict (a name
 * already taken) that the caller resolves by adopting the existing object.
 * Other 4xx are bugs in the request.
 */
export function isTransientError(error: unknown): boolean {
  if (error instanceof TerdutNetworkError) return true;
  if (error instanceof TerdutApiError) return error.status >= 500 || error.status === 429;
  return false;
}

export interface HttpTransportOptions {
  /** `http://terdut.example:8080`; paths are appended to it. */
  baseUrl: string;
  /** Bearer credential: an API key, or the bootstrap token for the bootstrap endpoints. */
  token?: string;
  /** Per request; default 10 s. A hung server must not hang the caller's reconcile. */
  timeoutMs?: number;
  /** For tests and instrumentation; defaults to the global fetch. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  body?: unknown;
  /** Overrides the transport's token for this request (bootstrap uses the bootstrap token). */
  token?: string;
  query?: Record<string, string | number | undefined>;
}

/** Sends JSON requests to one terdut-server. */
export class HttpTransport {
  readonly baseUrl: string;
  readonly #token: string | undefined;
  readonly #timeoutMs: number;
  readonly #fetch: typeof fetch;

  constructor(options: HttpTransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#token = options.token;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#fetch = options.fetch ?? fetch;
  }

  /** The parsed JSON answer (undefined for 204). Throws TerdutApiError or TerdutNetworkError. */
  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {}))
      if (value !== undefined) url.searchParams.set(name, String(value));
    const headers: Record<string, string> = { accept: 'application/json' };
    const token = options.token ?? this.#token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';

    let response: Response;
    let text: string;
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new TerdutNetworkError(method, path, error);
    }
    if (!response.ok) {
      const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
      throw new TerdutApiError(
        response.status,
        errorMessage(text, response),
        method,
        path,
        Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
      );
    }
    if (text === '') return undefined as T;
    try {
      return JSON.parse(text) as T;
    } catch {
      // A 2xx that is no JSON is not terdut's answer: a sign-in page of an authenticating proxy
      // in front of it, a captive portal. Said as such, not as a SyntaxError from deep inside.
      const type = response.headers.get('content-type') ?? 'no content type';
      throw new TerdutApiError(
        response.status,
        `not a JSON answer (${type}): is a proxy or sign-in page in front of terdut? It began ${JSON.stringify(text.slice(0, 80))}`,
        method,
        path,
      );
    }
  }
}

function errorMessage(text: string, response: Response): string {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    if (typeof body.error === 'string') return body.error;
  } catch {
    // Not our JSON error shape (a proxy's HTML page, say): fall through.
  }
  return text.slice(0, 200) || response.statusText;
}
