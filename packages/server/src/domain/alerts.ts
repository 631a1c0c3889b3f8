/**
 * Alerts as the server's rules see them, whatever sent them: the intake
 * correlates `AlertGroupNotification`s, the Alertmanager adapter
 * (`alertmanager/parse.ts`) makes them, repositories store `AlertState`s.
 */
import type { AlertStatus } from '@terdut/contract';

export type { AlertStatus } from '@terdut/contract';
/** `alertmanager`: a resolved notification said so; `expiry`: not refreshed for too long. */
export type AlertResolutionSource = 'alertmanager' | 'expiry';

/** The state of one occurrence of an alert, as a notification describes it. */
export interface AlertState {
  fingerprint: string;
  group_key: string;
  name: string;
  status: AlertStatus;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  starts_at: Date;
  ends_at: Date | null;
  generator_url: string;
  resolution_source: AlertResolutionSource | null;
}

/** One notification of an alert group's whole current state: dates are dates, duplicates are gone. */
export interface AlertGroupNotification {
  groupKey: string;
  groupLabels: Record<string, string>;
  commonLabels: Record<string, string>;
  commonAnnotations: Record<string, string>;
  alerts: AlertState[];
}
