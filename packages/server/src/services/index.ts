import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { AuthenticationService } from './authentication.ts';
import { SessionService } from './sessions.ts';
import { SignInThrottle } from './sign-in-throttle.ts';
import { BootstrapGate } from './bootstrap-gate.ts';
import { SignInService } from './sign-in.ts';
import { PasswordService } from './passwords.ts';
import { OidcSignInService } from './oidc-sign-in.ts';
import { createOidcRelyingParty } from '../adapters/oidc.ts';
import { AuditService } from './audit.ts';
import { UserService } from './users.ts';
import { ApiKeyService } from './api-keys.ts';
import { ServiceAccountService } from './service-accounts.ts';
import { BootstrapService } from './bootstrap.ts';
import { ScheduleService } from './schedule.ts';
import { SchedulesService, scheduleOnCallLookup } from './schedules.ts';
import { StatisticsService } from './statistics.ts';
import { IntakeService } from './intake.ts';
import { IncidentService } from './incidents.ts';
import { AlertService } from './alerts.ts';
import { AlertExpiryService } from './alert-expiry.ts';
import { RetentionService } from './retention.ts';
import { CapabilityService } from './capabilities.ts';
import { PagingService } from './paging/paging.ts';
import { EscalationPolicyService } from './paging/escalation-policies.ts';
import { ContactMethodService } from './paging/contact-methods.ts';
import { MaintenanceWindowService } from './paging/maintenance-windows.ts';
import { HeartbeatService } from './paging/heartbeats.ts';
import { HandoffNoticeService } from './paging/handoff-notices.ts';
import { createPagingMetrics } from './paging/metrics.ts';
import { httpProviders } from './paging/providers.ts';
import { smtpSender } from './paging/email.ts';

/** What services may be given; each service takes only the parts it uses. */
export interface ServiceDeps {
  db: Database;
  clock: Clock;
  config: Config;
  metrics: Metrics;
  /** Run a paging pass right after an incident opens (main.ts); off for in-process tests. */
  wakePaging?: boolean;
}

/** The server's services, built once per app. Routes reach them through `app.services`. */
export interface Services {
  authentication: AuthenticationService;
  signIn: SignInService;
  oidcSignIn: OidcSignInService;
  passwords: PasswordService;
  audit: AuditService;
  users: UserService;
  apiKeys: ApiKeyService;
  serviceAccounts: ServiceAccountService;
  bootstrap: BootstrapService;
  schedule: ScheduleService;
  schedules: SchedulesService;
  statistics: StatisticsService;
  intake: IntakeService;
  incidents: IncidentService;
  alerts: AlertService;
  alertExpiry: AlertExpiryService;
  retention: RetentionService;
  capabilities: CapabilityService;
  paging: PagingService;
  escalationPolicies: EscalationPolicyService;
  contactMethods: ContactMethodService;
  maintenanceWindows: MaintenanceWindowService;
  heartbeats: HeartbeatService;
  handoffNotices: HandoffNoticeService;
}

export function createServices(deps: ServiceDeps): Services {
  // Every identity change is audited in its own transaction.
  const audit = new AuditService(deps);
  const sessions = new SessionService(deps);
  const throttle = new SignInThrottle(deps);
  const bootstrapGate = new BootstrapGate(deps);
  const oidc = deps.config.oidc;
  // A change that moves who is on call now tells both people in its own
  // transaction (handoff notices); the notice service reads schedules, hence
  // the late binding.
  const schedules: SchedulesService = new SchedulesService({
    ...deps,
    audit,
    onCallChanges: {
      changed: (tx, change): Promise<boolean> => handoffNotices.changed(tx, change),
      committed: () => handoffNotices.committed(),
    },
  });
  const incidents = new IncidentService(deps);
  const paging = new PagingService({
    ...deps,
    metrics: createPagingMetrics(deps.metrics.registry, deps.db, deps.clock),
    incidents,
    providers: httpProviders({
      ...deps.config.paging,
      email: deps.config.paging.smtp && smtpSender(deps.config.paging.smtp),
      now: () => deps.clock.now(),
    }),
    onCall: (ref) => scheduleOnCallLookup(schedules, ref),
  });
  const heartbeats = new HeartbeatService({ ...deps, audit });
  const handoffNotices: HandoffNoticeService = new HandoffNoticeService({
    ...deps,
    schedules,
    paging,
    ...(deps.wakePaging ? { onClaimed: () => paging.wake() } : {}),
  });
  // Remembers the owners of API keys; whoever takes rights away empties it.
  const authentication = new AuthenticationService({ ...deps, sessions });
  const credentialsChanged = () => authentication.forgetApiKeys();
  return {
    audit,
    users: new UserService({ ...deps, audit, credentialsChanged, schedules }),
    apiKeys: new ApiKeyService({ ...deps, audit, credentialsChanged }),
    serviceAccounts: new ServiceAccountService({ ...deps, audit, credentialsChanged }),
    bootstrap: new BootstrapService({ ...deps, audit }),
    authentication,
    signIn: new SignInService({ ...deps, sessions, throttle, audit, bootstrap: bootstrapGate }),
    passwords: new PasswordService({ ...deps, sessions, throttle, audit }),
    oidcSignIn: new OidcSignInService({
      ...deps,
      sessions,
      audit,
      bootstrap: bootstrapGate,
      policy: oidc,
      relyingParty: oidc && createOidcRelyingParty(oidc),
    }),
    schedule: new ScheduleService({ ...deps, schedules, audit }),
    schedules,
    statistics: new StatisticsService(deps),
    // Paging wakes at once only in a serving process: tests and tools drive passes themselves.
    intake: new IntakeService({
      ...deps,
      absorbHeartbeats: (alerts) => heartbeats.absorb(alerts),
      ...(deps.wakePaging ? { onIncidentOpened: () => paging.wake() } : {}),
    }),
    heartbeats,
    incidents,
    paging,
    handoffNotices,
    escalationPolicies: new EscalationPolicyService({ ...deps, audit }),
    contactMethods: new ContactMethodService({ ...deps, paging, audit }),
    maintenanceWindows: new MaintenanceWindowService({ ...deps, audit }),
    alerts: new AlertService(deps),
    alertExpiry: new AlertExpiryService(deps),
    retention: new RetentionService(deps),
    capabilities: new CapabilityService(deps),
  };
}
