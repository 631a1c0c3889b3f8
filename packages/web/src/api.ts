/**
 * The app's one way to the server: @terdut/client (the API contract's types)
 * over the browser's fetch, authenticated by the session cookie only. No API
 * key is ever stored in the browser; state-changing requests carry the CSRF
 * token that the server put in the readable `terdut_csrf` cookie.
 */
import {
  TerdutApiError,
  TerdutClient,
  TerdutNetworkError,
  type AuditEntry,
  type ContactMethod,
  type ContactMethodInput,
  type ContactMethodKind,
  type ContactMethodTest,
  type EscalationPolicy,
  type EscalationPolicyInput,
  type EscalationPolicyTarget,
  type Heartbeat,
  type HeartbeatInput,
  type MaintenanceWindow,
  type MaintenanceWindowInput,
  type Me as MeWire,
  type PagingReadiness,
  type ServerInfo,
  type User,
} from '@terdut/client';

const CSRF_COOKIE = 'terdut_csrf';

function csrfToken(): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === CSRF_COOKIE) return decodeURIComponent(value.join('='));
  }
  return undefined;
}

const sessionFetch: typeof fetch = (input, init = {}) => {
  const headers = new Headers(init.headers);
  const method = (init.method ?? 'GET').toUpperCase();
  const token = csrfToken();
  if (method !== 'GET' && method !== 'HEAD' && token !== undefined) headers.set('x-csrf-token', token);
  return fetch(input, { ...init, headers, credentials: 'same-origin' }).then((response) => {
    // The session expired or was revoked while the page was open: back to the sign-in page.
    if (response.status === 401 && !new URL(response.url).pathname.startsWith('/auth/'))
      window.dispatchEvent(new Event(SESSION_ENDED_EVENT));
    return response;
  });
};

/** Dispatched on `window` when the server no longer knows the session. */
export const SESSION_ENDED_EVENT = 'terdut:session-ended';

export const client = new TerdutClient({ baseUrl: location.origin, fetch: sessionFetch, timeoutMs: 15_000 });
const http = client.http;

export type Role = 'admin' | 'member';
/** `User` as the server sends it (api-contract.md), with the role the users routes add. */
export type Person = User & { role: Role };
/** `Me` as the contract says, with the role the users routes add. */
export type Me = Omit<MeWire, 'user'> & { user: Person };
export type { AuditEntry, ServerInfo } from '@terdut/client';
/** Paging shapes: the contract's (packages/contract), as @terdut/client re-exports them. */
export type {
  ContactMethod,
  ContactMethodInput,
  ContactMethodTest,
  EscalationPolicy,
  EscalationPolicyInput,
  Heartbeat,
  HeartbeatInput,
  MaintenanceWindow,
  MaintenanceWindowInput,
  PagingReadiness,
} from '@terdut/client';
export type ContactKind = ContactMethodKind;
/** Whom a policy's step pages: on call (in a schedule, the default one when none is named), a person, all admins. */
export type PolicyTarget = EscalationPolicyTarget;
export type PolicyStep = EscalationPolicy['steps'][number];

/** Calls the contract has and @terdut/client does not wrap yet; same transport, same errors. */
export const api = {
  serverInfo: () => http.request<ServerInfo>('GET', '/api/server-info'),
  me: () => http.request<Me>('GET', '/api/me'),
  people: () => http.request<Person[]>('GET', '/api/users'),
  signIn: (username: string, password: string) =>
    http.request<Me>('POST', '/auth/login', { body: { username, password } }),
  signOut: () => http.request<void>('POST', '/auth/logout'),
  createPerson: (username: string, email: string, role: Role) =>
    http.request<Person>('POST', '/api/users', { body: { username, email, role } }),
  setRole: (userId: number, role: Role) =>
    http.request<Person>('PUT', `/api/users/${userId}/role`, { body: { role } }),
  setPassword: (userId: number, password: string, currentPassword?: string) =>
    http.request<void>('PUT', `/api/users/${userId}/password`, {
      body: { password, ...(currentPassword ? { current_password: currentPassword } : {}) },
    }),
  setNotifyTopic: (userId: number, topic: string) =>
    http.request<Person>('PUT', `/api/users/${userId}/notify`, { body: { ntfy_topic: topic } }),
  /** The newest `limit` entries, or with `before` (an entry's id) the ones older than it. */
  audit: (limit = 200, before?: number) =>
    http.request<AuditEntry[]>('GET', '/api/audit', {
      query: { limit, ...(before !== undefined ? { before } : {}) },
    }),

  pagingReadiness: () => http.request<PagingReadiness>('GET', '/api/paging/me'),
  contactMethods: (userId: number) =>
    http.request<ContactMethod[]>('GET', `/api/users/${userId}/contact-methods`),
  createContactMethod: (userId: number, input: ContactMethodInput) =>
    http.request<ContactMethod>('POST', `/api/users/${userId}/contact-methods`, { body: input }),
  setContactMethodEnabled: (userId: number, methodId: number, enabled: boolean) =>
    http.request<ContactMethod>('PATCH', `/api/users/${userId}/contact-methods/${methodId}`, {
      body: { enabled },
    }),
  deleteContactMethod: (userId: number, methodId: number) =>
    http.request<void>('DELETE', `/api/users/${userId}/contact-methods/${methodId}`),
  testContactMethod: (userId: number, methodId: number) =>
    http.request<ContactMethodTest>('POST', `/api/users/${userId}/contact-methods/${methodId}/test`),

  escalationPolicies: () => http.request<EscalationPolicy[]>('GET', '/api/escalation-policies'),
  createEscalationPolicy: (input: EscalationPolicyInput) =>
    http.request<EscalationPolicy>('POST', '/api/escalation-policies', { body: input }),
  replaceEscalationPolicy: (id: number, input: EscalationPolicyInput) =>
    http.request<EscalationPolicy>('PUT', `/api/escalation-policies/${id}`, { body: input }),
  deleteEscalationPolicy: (id: number) => http.request<void>('DELETE', `/api/escalation-policies/${id}`),

  heartbeats: () => http.request<Heartbeat[]>('GET', '/api/heartbeats'),
  createHeartbeat: (input: HeartbeatInput) =>
    http.request<Heartbeat>('POST', '/api/heartbeats', { body: input }),
  deleteHeartbeat: (id: number) => http.request<void>('DELETE', `/api/heartbeats/${id}`),

  maintenanceWindows: () => http.request<MaintenanceWindow[]>('GET', '/api/maintenance-windows'),
  createMaintenanceWindow: (input: MaintenanceWindowInput) =>
    http.request<MaintenanceWindow>('POST', '/api/maintenance-windows', { body: input }),
  deleteMaintenanceWindow: (id: number) => http.request<void>('DELETE', `/api/maintenance-windows/${id}`),
};

/**
 * The server's own words for a failed call, for showing in place; when no
 * server answered, what happened and what to do, in words (not the request
 * line, nor a proxy's HTML error page).
 */
export function errorText(error: unknown): string {
  if (error instanceof TerdutNetworkError) {
    // A change that got no answer may or may not have been made (the answer, not the request, can be
    // what was lost); a read that got none leaves the page showing what it had.
    const change = error.method !== 'GET';
    if (error.cause instanceof Error && error.cause.name === 'TimeoutError')
      return change
        ? 'terdut did not answer in time, so this may or may not have been done: wait for the page to show it before trying again.'
        : 'terdut did not answer in time: what the page shows may be out of date.';
    return change
      ? 'No answer from terdut, so this was probably not done: check your connection, then try again once the header says Live.'
      : 'No answer from terdut: check your connection, or wait for the server to come back. What the page shows may be out of date.';
  }
  // A proxy's own page (nginx's 502 while the server restarts), not the server's words.
  if (error instanceof TerdutApiError && error.status >= 500 && /^\s*</.test(error.serverMessage))
    return `terdut is not reachable (HTTP ${error.status} from a proxy): the server may be restarting. Try again in a moment.`;
  if (error instanceof TerdutApiError) {
    // The wait, unless the server's words already give it.
    const wait =
      error.retryAfterSeconds !== undefined && !/try again in/i.test(error.serverMessage)
        ? ` (try again in ${error.retryAfterSeconds} s)`
        : '';
    return error.serverMessage + wait;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

export function isUnauthenticated(error: unknown): boolean {
  return error instanceof TerdutApiError && error.status === 401;
}

export { TerdutApiError };
