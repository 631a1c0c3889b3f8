/**
 * The adapters that hand a message to a provider (ntfy, an outgoing
 * webhook). Each answers the provider's message id, or throws a
 * DeliveryError saying whether trying again can help.
 */
import { createHmac } from 'node:crypto';
import type { ContactMethodKind } from '../../repositories/contact-methods.ts';
import type { EmailSender } from './email.ts';
import { refusedWebhookDestination } from './webhook-addresses.ts';

/** Where one message goes. */
export interface ContactTarget {
  kind: ContactMethodKind;
  /** ntfy topic or webhook URL. */
  target: string;
  /** Webhook HMAC key. */
  secret: string | null;
  /** Our id of this message, sent to webhooks as X-Terdut-Delivery so receivers can drop a duplicate. */
  deliveryId: string;
}

/** One message, already composed (messages.ts). */
export interface PageMessage {
  title: string;
  text: string;
  /** ntfy priority 1–5. */
  priority: number;
  tags: string[];
  /** Link to the incident (a summary's: to the queue); absent without TERDUT_PUBLIC_URL. */
  incidentUrl?: string;
  /** What an email calls that link; default "Open the incident". */
  linkLabel?: string;
  /** The request that acknowledges as the paged person; absent without TERDUT_PUBLIC_URL. */
  acknowledge?: { url: string; method: 'POST'; headers: Record<string, string>; body: string };
  /** The confirmation page that acknowledges after a press of its button (email); a GET of it changes nothing. */
  acknowledgePage?: string;
  /** The documented webhook JSON body (README, "Outgoing webhook"). */
  webhookBody: Record<string, unknown>;
  /**
   * The msg-id (RFC 5322 §3.6.4, `<…>`) that every email about one incident
   * answers (In-Reply-To, References), so a mail program shows its pages,
   * update and resolved notice as one conversation. No message carries it as
   * its own Message-ID: each person's first email of the incident differs.
   */
  emailThread?: string;
}

export interface ProviderAnswer {
  messageId: string | null;
  /** What the provider said, short, for the timeline and the test endpoint. */
  answer: string;
}

/**
 * A message the provider did not take. `permanent`: the same request will
 * never succeed (a 4xx such as a bad topic or a refused token), so retrying
 * only delays the escalation. Otherwise (network error, timeout, 5xx, 429)
 * it is retried with back-off; `retryAfterMs` is the provider's Retry-After.
 */
export class DeliveryError extends Error {
  readonly permanent: boolean;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, permanent: boolean, retryAfterMs?: number) {
    super(message);
    this.permanent = permanent;
    this.retryAfterMs = retryAfterMs;
  }
}

export interface Providers {
  send(to: ContactTarget, message: PageMessage): Promise<ProviderAnswer>;
}

const SEND_TIMEOUT_MS = 10_000;

/** The real providers: ntfy and webhooks over HTTP, email over SMTP when configured. */
export function httpProviders(options: {
  ntfyUrl: string;
  ntfyToken: string | undefined;
  email?: EmailSender | undefined;
  now?: () => Date;
  /** TERDUT_WEBHOOK_ALLOW_LINK_LOCAL. */
  webhookLinkLocalAllowed?: boolean;
}): Providers {
  const now = options.now ?? (() => new Date());
  return {
    async send(to, message) {
      switch (to.kind) {
        case 'ntfy':
          return sendNtfy(options.ntfyUrl, options.ntfyToken, to, message);
        case 'webhook':
          return sendWebhook(to, message, now(), options.webhookLinkLocalAllowed === true);
        case 'email':
          if (options.email === undefined) {
            throw new DeliveryError(
              'email is not configured on this server (TERDUT_SMTP_URL is unset)',
              true,
            );
          }
          return options.email.send(to.target, message, to.deliveryId);
      }
    },
  };
}

/** ntfy's JSON publishing (docs.ntfy.sh/publish/#publish-as-json): POST the message to the server root. */
async function sendNtfy(
  baseUrl: string,
  token: string | undefined,
  to: ContactTarget,
  message: PageMessage,
): Promise<ProviderAnswer> {
  const body: Record<string, unknown> = {
    topic: to.target,
    title: message.title,
    message: message.text,
    priority: message.priority,
    tags: message.tags,
  };
  if (message.incidentUrl !== undefined) body.click = message.incidentUrl;
  if (message.acknowledge !== undefined) {
    body.actions = [
      {
        action: 'http',
        label: 'Acknowledge',
        url: message.acknowledge.url,
        method: message.acknowledge.method,
        headers: message.acknowledge.headers,
        body: message.acknowledge.body,
        clear: true,
      },
      // Resolving is final, so the phone opens the incident page, where
      // Resolve asks to confirm, rather than resolving in one press.
      ...(message.incidentUrl === undefined
        ? []
        : [{ action: 'view', label: 'Resolve…', url: message.incidentUrl, clear: false }]),
    ];
  }
  fitNtfyLimits(body);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const response = await post(`${baseUrl}/`, headers, JSON.stringify(body), 'ntfy');
  const text = await answerStart(response);
  let id: string | null = null;
  try {
    const parsed = JSON.parse(text) as { id?: unknown };
    if (typeof parsed.id === 'string') id = parsed.id;
  } catch {
    // ntfy always answers JSON; a proxy in front might not. The 2xx is what counts.
  }
  return { messageId: id, answer: `ntfy accepted (HTTP ${response.status})` };
}

/**
 * ntfy's default `message-size-limit` (docs.ntfy.sh/publish/#limitations): a
 * message of this many bytes or more becomes an attachment (a file on the
 * phone instead of the text), or a 400 "attachments not allowed" on a server
 * without an attachment store; a JSON publish of twice this or more is
 * refused with 413. ntfy counts reaching the limit as exceeding it.
 */
const NTFY_MESSAGE_LIMIT_BYTES = 4096;
const NTFY_JSON_LIMIT_BYTES = 2 * NTFY_MESSAGE_LIMIT_BYTES;
/** A title is a line or two on a phone; this keeps room for the message. */
const NTFY_TITLE_LIMIT_BYTES = 1024;

/**
 * Shortens the title and message of an ntfy publish (`…` at the cut) so
 * that ntfy takes it as a message: alert annotations may be 16 KiB each,
 * and a refused publish would page nobody. The link opens the whole incident.
 */
function fitNtfyLimits(body: Record<string, unknown>): void {
  body.title = shortened(body.title as string, (text) => jsonBytes(text) <= NTFY_TITLE_LIMIT_BYTES);
  const around = Buffer.byteLength(JSON.stringify({ ...body, message: '' }));
  body.message = shortened(
    body.message as string,
    (text) =>
      Buffer.byteLength(text) < NTFY_MESSAGE_LIMIT_BYTES && around + jsonBytes(text) < NTFY_JSON_LIMIT_BYTES,
  );
}

/** Bytes of `text` inside a JSON string (escapes included, quotes not). */
function jsonBytes(text: string): number {
  return Buffer.byteLength(JSON.stringify(text)) - 2;
}

/** `text`, or its longest start (whole code points) followed by `…` that `fits`. */
function shortened(text: string, fits: (text: string) => boolean): string {
  if (fits(text)) return text;
  const points = Array.from(text);
  let low = 0;
  let high = points.length - 1;
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    if (fits(`${points.slice(0, middle).join('')}…`)) low = middle;
    else high = middle - 1;
  }
  return `${points.slice(0, low).join('').trimEnd()}…`;
}

/**
 * The outgoing webhook: the JSON body, signed. `X-Terdut-Signature` is
 * `sha256=` + hex HMAC-SHA256 over `<X-Terdut-Timestamp>.<body>`, so a
 * receiver can check both origin and freshness (reject old timestamps).
 */
async function sendWebhook(
  to: ContactTarget,
  message: PageMessage,
  now: Date,
  linkLocalAllowed: boolean,
): Promise<ProviderAnswer> {
  // Checked at every send, not only when the method was added: a name's addresses change.
  const refused = linkLocalAllowed ? undefined : await refusedWebhookDestination(to.target);
  if (refused !== undefined) throw new DeliveryError(refused, true);
  const body = JSON.stringify(message.webhookBody);
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'terdut-server',
    'x-terdut-delivery': to.deliveryId,
    'x-terdut-timestamp': timestamp,
  };
  if (to.secret !== null)
    headers['x-terdut-signature'] = `sha256=${webhookSignature(to.secret, timestamp, body)}`;
  const response = await post(to.target, headers, body, 'webhook');
  const text = (await answerStart(response)).slice(0, 200);
  let id: string | null = response.headers.get('x-message-id');
  try {
    const parsed = JSON.parse(text) as { id?: unknown };
    if (typeof parsed.id === 'string' || typeof parsed.id === 'number') id = String(parsed.id);
  } catch {
    // Receivers may answer anything; a 2xx is acceptance.
  }
  return { messageId: id, answer: `webhook accepted (HTTP ${response.status})` };
}

/** The signature a receiver recomputes: hex HMAC-SHA256 of `${timestamp}.${body}` with the method's secret. */
export function webhookSignature(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

/** POSTs and classifies failures; resolves only for a 2xx. */
async function post(
  url: string,
  headers: Record<string, string>,
  body: string,
  provider: string,
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers,
      body,
      // A redirect would resend the page elsewhere; providers answer directly.
      redirect: 'manual',
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${SEND_TIMEOUT_MS / 1000}s`
        : (cause ?? (error as Error).message);
    throw new DeliveryError(`${provider} at ${describeEndpoint(url)} not reachable (${reason})`, false);
  }
  if (response.status >= 200 && response.status < 300) return response;
  const redirect = redirectTarget(url, response);
  if (redirect !== undefined) {
    // Never followed (above); what an admin needs is where it points. Only the origin: the
    // address may carry a receiver's token, and members read this answer.
    void response.body?.cancel().catch(() => {});
    throw new DeliveryError(
      `${provider} answered HTTP ${response.status}, a redirect to ${redirect}: terdut does not follow ` +
        'redirects (the page would be sent again elsewhere); use the address it redirects to',
      true,
    );
  }
  const answer = (await answerStart(response)).trim().slice(0, 300);
  const said = `${provider} answered HTTP ${response.status}${answer ? `: ${answer}` : ''}`;
  if (response.status === 429)
    throw new DeliveryError(said, false, retryAfterMs(response.headers.get('retry-after')));
  // 408 and 5xx: the provider (or a proxy) may well take it later.
  if (response.status === 408 || response.status >= 500) throw new DeliveryError(said, false);
  throw new DeliveryError(said, true);
}

/** The origin a 3xx answer's Location points at (relative to `url`), else undefined. */
function redirectTarget(url: string, response: Response): string | undefined {
  const location = response.headers.get('location');
  if (response.status < 300 || response.status >= 400 || location === null) return undefined;
  try {
    return new URL(location, url).origin;
  } catch {
    return undefined;
  }
}

/** How much of an answer's body is read: enough for an id or an error message. */
const ANSWER_READ_LIMIT_BYTES = 64 * 1024;

/**
 * The start of an answer's body as text, at most ANSWER_READ_LIMIT_BYTES;
 * the rest is never read. A receiver (a member's own webhook) may answer
 * without end, and reading it all would hold gigabytes in memory. A body cut
 * off by the timeout or a reset is what arrived: the status already said
 * whether the message was taken.
 */
async function answerStart(response: Response): Promise<string> {
  const reader: ReadableStreamDefaultReader<Uint8Array> | undefined = response.body?.getReader();
  if (reader === undefined) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    while (size < ANSWER_READ_LIMIT_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      size += value.byteLength;
    }
  } catch {
    // Keep what arrived.
  } finally {
    void reader.cancel().catch(() => {});
  }
  return Buffer.concat(chunks).subarray(0, ANSWER_READ_LIMIT_BYTES).toString('utf8');
}

/** Retry-After as seconds or an HTTP date (RFC 9110 §10.2.3), in ms; undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** scheme://host:port of a URL: webhook paths may carry secrets, so messages never show them. */
function describeEndpoint(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '(invalid URL)';
  }
}
