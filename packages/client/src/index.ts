/**
 * Typed client of the terdut-server API contract (api-contract.md), shared by
 * the operator, tests and tools. One module per resource; `TerdutClient`
 * composes them over one transport.
 *
 * @example
 *   const client = new TerdutClient({ baseUrl: 'http://terdut.ns.svc:8080', token: apiKey });
 *   const { user } = await client.users.me();
 */
import { HttpTransport, type HttpTransportOptions } from './http.ts';
import { BootstrapApi } from './bootstrap.ts';
import { ServiceAccountsApi } from './service-accounts.ts';
import { UsersApi } from './users.ts';
import { IncidentsApi } from './incidents.ts';
import { AlertsApi } from './alerts.ts';
import { ScheduleApi, SchedulesApi } from './schedule.ts';
import { StatsApi } from './stats.ts';
import { WebhookApi } from './webhook.ts';

export { HttpTransport, TerdutApiError, TerdutNetworkError, isTransientError } from './http.ts';
export type { HttpTransportOptions, RequestOptions } from './http.ts';
export type { BootstrapAdmin, BootstrapResult } from './bootstrap.ts';
export type { ApiKey, AuditEntry, Me, NewApiKey, ServiceAccount, User } from '@terdut/contract';
export type { Incident, IncidentEvent, IncidentQuery } from './incidents.ts';
export type { Alert, AlertQuery } from './alerts.ts';
export type {
  OnCall,
  OnCallSourceKind,
  Override,
  Rotation,
  RotationInput,
  RotationRestriction,
  Schedule,
  ScheduleEntry,
  ShiftUnit,
  TimelineSegment,
} from './schedule.ts';
export type { AlertCounts, AlertNameCount, DayCount, HourCount, IncidentStats } from './stats.ts';
export type { AlertmanagerAlert, AlertmanagerNotification } from './webhook.ts';
/** Paging: contact methods, escalation policies, heartbeats, maintenance windows (no wrapper yet; the web app calls them). */
export type {
  ContactMethod,
  ContactMethodInput,
  ContactMethodKind,
  ContactMethodTest,
  EscalationPolicy,
  EscalationPolicyInput,
  EscalationPolicyTarget,
  Heartbeat,
  HeartbeatInput,
  MaintenanceWindow,
  MaintenanceWindowInput,
  PagingReadiness,
} from '@terdut/contract';
/** `GET /api/server-info` and the `change` events of `GET /api/events` (no wrapper yet; the web app reads them). */
export type { Change, ChangeTopic, ServerInfo } from '@terdut/contract';

export class TerdutClient {
  readonly http: HttpTransport;
  readonly bootstrap: BootstrapApi;
  readonly serviceAccounts: ServiceAccountsApi;
  readonly users: UsersApi;
  readonly incidents: IncidentsApi;
  readonly alerts: AlertsApi;
  readonly schedule: ScheduleApi;
  readonly schedules: SchedulesApi;
  readonly stats: StatsApi;
  readonly webhook: WebhookApi;

  constructor(options: HttpTransportOptions) {
    this.http = new HttpTransport(options);
    this.bootstrap = new BootstrapApi(this.http);
    this.serviceAccounts = new ServiceAccountsApi(this.http);
    this.users = new UsersApi(this.http);
    this.incidents = new IncidentsApi(this.http);
    this.alerts = new AlertsApi(this.http);
    this.schedule = new ScheduleApi(this.http);
    this.schedules = new SchedulesApi(this.http);
    this.stats = new StatsApi(this.http);
    this.webhook = new WebhookApi(this.http);
  }
}
