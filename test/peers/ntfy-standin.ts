/**
 * STAND-IN for an ntfy server (https://docs.ntfy.sh). The real server cannot
 * be had on these machines (the Go module proxy refuses heckel.io/ntfy/v2),
 * so this follows ntfy's documented HTTP API, only as far as terdut and a
 * phone use it:
 *  - JSON publishing: `POST /` with `{ topic, title, message, priority,
 *    tags, click, actions }`; the answer is the stored message (with its
 *    `id`, `time`, `event: "message"`; every action gets an `id`).
 *  - The poll API a phone uses: `GET /<topic>/json?poll=1`, one JSON message
 *    per line.
 *  - Access control with access tokens: with `token` set, a request without
 *    `Authorization` is refused with 403 (anonymous access denied), one with
 *    another Bearer token with 401, each with ntfy's JSON error body
 *    (`{"code":40101,"http":401,"error":"unauthorized",…}`).
 *  - Rate limiting: `limitNext(n)` makes the next n publishes answer 429
 *    `{"code":42901,"http":429,"error":"limit reached: too many requests, please be nice",…}`,
 *    as ntfy does for a visitor over its request limit.
 *  - Size limits, with the defaults of `message-size-limit` (4096 bytes):
 *    a JSON body of 2 × that or more answers 413 `{"code":41303,…,"error":"JSON
 *    body too large"}`; a message of 4096 bytes or more would become an
 *    attachment, which this server (like ntfy without `attachment-cache-dir`)
 *    refuses with 400 `{"code":40014,…,"error":"invalid request: attachments
 *    not allowed"}`. ntfy peeks that many bytes and treats reaching the
 *    limit as exceeding it, so both bounds are exclusive.
 *  - The topic names ntfy keeps for its own paths (`app`, `docs`, `login`, …)
 *    answer 400 `{"code":40010,…,"error":"invalid request: topic name is not allowed"}`.
 * It does not do attachments, e-mail, UnifiedPush, caching rules or expiry.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';

export interface NtfyAction {
  id: string;
  action: string;
  label: string;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  clear?: boolean;
}

export interface NtfyMessage {
  id: string;
  time: number;
  expires: number;
  event: 'message';
  topic: string;
  title?: string;
  message: string;
  priority?: number;
  tags?: string[];
  click?: string;
  actions?: NtfyAction[];
}

export interface NtfyStandin {
  url: string;
  /** Every publish request that reached the server, accepted or not (for attempt counts). */
  readonly publishAttempts: { topic: string | undefined; status: number }[];
  /** The next `count` publishes answer 429. */
  limitNext(count: number): void;
  close(): Promise<void>;
}

const LINK = 'https://ntfy.sh/docs/publish/#limitations';
/** ntfy's default `message-size-limit`; a JSON publish may be twice that, for the JSON around the message. */
export const NTFY_MESSAGE_SIZE_LIMIT = 4096;
/** Topic names ntfy keeps for its own paths (its DefaultDisallowedTopics): a publish to one is a 400. */
export const NTFY_DISALLOWED_TOPICS = [
  'docs',
  'static',
  'file',
  'app',
  'metrics',
  'account',
  'settings',
  'signup',
  'login',
  'v1',
];

export async function startNtfyStandin(options: { token?: string } = {}): Promise<NtfyStandin> {
  const topics = new Map<string, NtfyMessage[]>();
  const publishAttempts: { topic: string | undefined; status: number }[] = [];
  let limited = 0;

  const fail = (res: ServerResponse, http: number, code: number, error: string) => {
    res.writeHead(http, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ code, http, error, link: LINK }) + '\n');
  };
  const authorised = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (options.token === undefined) return true;
    const header = req.headers.authorization;
    if (header === undefined) {
      fail(res, 403, 40301, 'forbidden');
      return false;
    }
    if (header !== `Bearer ${options.token}`) {
      fail(res, 401, 40101, 'unauthorized');
      return false;
    }
    return true;
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://ntfy.local');
      if (req.method === 'POST' && url.pathname === '/') {
        let body: Partial<NtfyMessage> & { actions?: Omit<NtfyAction, 'id'>[] };
        if (Buffer.concat(chunks).length >= 2 * NTFY_MESSAGE_SIZE_LIMIT) {
          publishAttempts.push({ topic: undefined, status: 413 });
          fail(res, 413, 41303, 'JSON body too large');
          return;
        }
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as typeof body;
        } catch {
          publishAttempts.push({ topic: undefined, status: 400 });
          fail(res, 400, 40017, 'invalid request: request body must be message JSON');
          return;
        }
        if (!authorised(req, res)) {
          publishAttempts.push({ topic: body.topic, status: res.statusCode });
          return;
        }
        if (limited > 0) {
          limited -= 1;
          publishAttempts.push({ topic: body.topic, status: 429 });
          fail(res, 429, 42901, 'limit reached: too many requests, please be nice');
          return;
        }
        if (typeof body.topic !== 'string' || !/^[-_A-Za-z0-9]{1,64}$/.test(body.topic)) {
          publishAttempts.push({ topic: body.topic, status: 400 });
          fail(res, 400, 40009, 'invalid request: topic invalid');
          return;
        }
        if (NTFY_DISALLOWED_TOPICS.includes(body.topic)) {
          publishAttempts.push({ topic: body.topic, status: 400 });
          fail(res, 400, 40010, 'invalid request: topic name is not allowed');
          return;
        }
        if (Buffer.byteLength(body.message ?? '') >= NTFY_MESSAGE_SIZE_LIMIT) {
          publishAttempts.push({ topic: body.topic, status: 400 });
          fail(res, 400, 40014, 'invalid request: attachments not allowed');
          return;
        }
        const now = Math.floor(Date.now() / 1000);
        const message: NtfyMessage = {
          id: randomBytes(9).toString('base64url').slice(0, 12),
          time: now,
          expires: now + 43_200,
          event: 'message',
          topic: body.topic,
          message: body.message ?? 'triggered',
          ...(body.title !== undefined ? { title: body.title } : {}),
          ...(body.priority !== undefined ? { priority: body.priority } : {}),
          ...(body.tags !== undefined ? { tags: body.tags } : {}),
          ...(body.click !== undefined ? { click: body.click } : {}),
          ...(body.actions !== undefined
            ? { actions: body.actions.map((action) => ({ ...action, id: randomBytes(5).toString('hex') })) }
            : {}),
        };
        topics.set(body.topic, [...(topics.get(body.topic) ?? []), message]);
        publishAttempts.push({ topic: body.topic, status: 200 });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(message) + '\n');
        return;
      }
      const poll = /^\/([-_A-Za-z0-9]{1,64})\/json$/.exec(url.pathname);
      if (req.method === 'GET' && poll && url.searchParams.get('poll') === '1') {
        if (!authorised(req, res)) return;
        res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8' });
        res.end((topics.get(poll[1]!) ?? []).map((message) => JSON.stringify(message) + '\n').join(''));
        return;
      }
      fail(res, 404, 40401, 'page not found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    publishAttempts,
    limitNext(count) {
      limited = count;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What a phone subscribed to `topic` would show: the poll API's messages. */
export async function pollTopic(baseUrl: string, topic: string, token?: string): Promise<NtfyMessage[]> {
  const response = await fetch(`${baseUrl}/${topic}/json?poll=1`, {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  if (response.status !== 200)
    throw new Error(`poll ${topic}: HTTP ${response.status} ${await response.text()}`);
  return (await response.text())
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as NtfyMessage);
}

/**
 * Presses an `http` action the way the ntfy app does: a request with the
 * action's method (default POST), URL, headers and body, nothing else.
 */
export async function pressHttpAction(action: NtfyAction): Promise<{ status: number; body: unknown }> {
  if (action.action !== 'http')
    throw new Error(`action "${action.label}" is a ${action.action} action, not http`);
  const response = await fetch(action.url, {
    method: action.method ?? 'POST',
    headers: action.headers ?? {},
    ...(action.body !== undefined ? { body: action.body } : {}),
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: response.status, body };
}

/** Request headers a page may send cross-origin without a preflight (Fetch standard, "CORS-safelisted request-header"). */
function corsSafelisted(name: string, value: string): boolean {
  const lower = name.toLowerCase();
  if (lower === 'accept' || lower === 'accept-language' || lower === 'content-language') return true;
  if (lower !== 'content-type') return false;
  const essence = value.split(';')[0]!.trim().toLowerCase();
  return ['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain'].includes(essence);
}

/**
 * Presses an `http` action the way ntfy's web app (and its PWA on a phone)
 * does: `fetch(url, { method, headers, body })` from a page on the ntfy
 * server's origin, so under the browser's CORS rules (Fetch standard). A
 * method other than GET/HEAD/POST or a header that is not safelisted (a JSON
 * Content-Type) makes the browser ask first with an OPTIONS preflight; the
 * request goes out only when that answers 2xx allowing the origin, the
 * method and the headers, and the page sees the answer only when it allows
 * the origin too. Otherwise fetch rejects ("Failed to fetch") and the app
 * marks the action failed: that is `{ status: 'blocked' }` here.
 */
export async function pressHttpActionInBrowser(
  action: NtfyAction,
  appOrigin: string,
): Promise<{ status: number; body: unknown } | { status: 'blocked'; reason: string }> {
  if (action.action !== 'http')
    throw new Error(`action "${action.label}" is a ${action.action} action, not http`);
  const method = (action.method ?? 'POST').toUpperCase();
  const headers = action.headers ?? {};
  const allowsOrigin = (response: Response) => {
    const allowed = response.headers.get('access-control-allow-origin');
    return allowed === '*' || allowed === appOrigin;
  };
  const unsafeHeaders = Object.entries(headers)
    .filter(([name, value]) => !corsSafelisted(name, value))
    .map(([name]) => name.toLowerCase())
    .sort();
  if (!['GET', 'HEAD', 'POST'].includes(method) || unsafeHeaders.length > 0) {
    const preflight = await fetch(action.url, {
      method: 'OPTIONS',
      headers: {
        origin: appOrigin,
        'access-control-request-method': method,
        ...(unsafeHeaders.length > 0 ? { 'access-control-request-headers': unsafeHeaders.join(',') } : {}),
      },
    });
    await preflight.arrayBuffer();
    if (preflight.status < 200 || preflight.status > 299)
      return { status: 'blocked', reason: `preflight answered HTTP ${preflight.status}` };
    if (!allowsOrigin(preflight)) return { status: 'blocked', reason: 'preflight did not allow the origin' };
    const list = (name: string) =>
      (preflight.headers.get(name) ?? '')
        .split(',')
        .map((item) => item.trim().toLowerCase())
        .filter((item) => item !== '');
    const methods = list('access-control-allow-methods');
    if (
      !['GET', 'HEAD', 'POST'].includes(method) &&
      !methods.includes(method.toLowerCase()) &&
      !methods.includes('*')
    )
      return { status: 'blocked', reason: `preflight did not allow the method ${method}` };
    const allowedHeaders = list('access-control-allow-headers');
    const missing = unsafeHeaders.filter(
      (name) => !allowedHeaders.includes(name) && !allowedHeaders.includes('*'),
    );
    if (missing.length > 0)
      return { status: 'blocked', reason: `preflight did not allow the headers ${missing.join(', ')}` };
  }
  const response = await fetch(action.url, {
    method,
    headers: { ...headers, origin: appOrigin },
    ...(action.body !== undefined ? { body: action.body } : {}),
  });
  const text = await response.text();
  if (!allowsOrigin(response)) return { status: 'blocked', reason: 'the answer did not allow the origin' };
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: keep the text.
  }
  return { status: response.status, body };
}
