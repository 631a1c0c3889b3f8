import type { Database } from '../db/database.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Metrics } from '../metrics.ts';
import { AuthenticationService } from './authentication.ts';
import { AuditService } from './audit.ts';
import { UserService } from './users.ts';
import { ApiKeyService } from './api-keys.ts';
import { ServiceAccountService } from './service-accounts.ts';
import { BootstrapService } from './bootstrap.ts';
import { ScheduleService } from './schedule.ts';
import { IntakeService } from './intake.ts';
import { IncidentService } from './incidents.ts';
import { AlertService } from './alerts.ts';
import { AlertExpiryService } from './alert-expiry.ts';
import { RetentionService } from './retention.ts';

/** What services may be given; each service takes only the parts it uses. */
export interface ServiceDeps {
  db: Database;
  clock: Clock;
  config: Config;
  metrics: Metrics;
}

/** The server's services, built once per app. Routes reach them through `app.services`. */
export interface Services {
  authentication: AuthenticationService;
  audit: AuditService;
  users: UserService;
  apiKeys: ApiKeyService;
  serviceAccounts: ServiceAccountService;
  bootstrap: BootstrapService;
  schedule: ScheduleService;
  intake: IntakeService;
  incidents: IncidentService;
  alerts: AlertService;
  alertExpiry: AlertExpiryService;
  retention: RetentionService;
}

export function createServices(deps: ServiceDeps): Services {
  // Every identity change is audited in its own transaction.
  const audit = new AuditService(deps);
  return {
    audit,
    users: new UserService({ ...deps, audit }),
    apiKeys: new ApiKeyService({ ...deps, audit }),
    serviceAccounts: new ServiceAccountService({ ...deps, audit }),
    bootstrap: new BootstrapService({ ...deps, audit }),
    authentication: new AuthenticationService(deps),
    schedule: new ScheduleService(deps),
    intake: new IntakeService(deps),
    incidents: new IncidentService(deps),
    alerts: new AlertService(deps),
    alertExpiry: new AlertExpiryService(deps),
    retention: new RetentionService(deps),
  };
}
