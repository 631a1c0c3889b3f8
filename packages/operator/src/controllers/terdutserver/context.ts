/**
 * What reconcile steps share. `ReconcileDeps` are the long-lived adapters
 * (each step uses the few it needs); `Pass` is the state of one reconcile
 * pass, re-read from the API server at its start. A step returns `Stop` to
 * end the pass early ("come back later"), never an exception for an expected
 * state such as a missing Secret.
 */
import type { TerdutClient } from '@terdut/client';
import type { TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import type { KubeClient, KubeObject } from '../../runtime/kube-client.ts';
import type { ConditionSet } from './conditions.ts';
import type { EventRecorder } from './events.ts';
import type { Failpoint } from './failpoint.ts';
import type { KeyVerifier } from './key-verifier.ts';
import type { ServerUrlResolver } from './server-url.ts';
import type { Logger } from '../../runtime/logger.ts';

export type { Logger } from '../../runtime/logger.ts';

export interface ReconcileDeps {
  kube: KubeClient;
  operatorNamespace: string;
  defaultImage: string;
  events: EventRecorder;
  resolveServerUrl: ServerUrlResolver;
  /**
   * A client for one terdut-server; `token` is an API key (omit for the
   * bootstrap endpoints); `signal` aborts its requests.
   */
  serverClient: (baseUrl: string, token?: string, signal?: AbortSignal) => TerdutClient;
  failpoint: Failpoint;
  tokenPickupTimeoutMs: number;
  /** How long a deletion retries revoking the operator's keys before it finishes anyway. */
  finalizeTimeoutMs: number;
  /** Checks recorded keys between passes (key-verifier.ts). */
  keyVerifier: KeyVerifier;
  /** Whether Gateway API's HTTPRoute is served (discovery; cached by the caller). */
  gatewayApiInstalled: () => Promise<boolean>;
  /** Metadata of a Secret from the watch cache (no request), for existence checks. */
  cachedSecret: (namespace: string, name: string) => KubeObject | undefined;
  /**
   * A Secret the operator labels as its own (token, credentials, checkpoint),
   * with data, from the watch cache; undefined when the cache has none.
   */
  ownSecret: (namespace: string, name: string) => Secret | undefined;
  now: () => Date;
  /** In a pass: bound to the TerdutServer's key. */
  log: Logger;
}

export interface Secret extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { secretKeyRef?: { name: string; key: string; optional?: boolean } };
}

export interface Deployment extends KubeObject {
  spec: { replicas?: number };
  status?: {
    replicas?: number;
    availableReplicas?: number;
    readyReplicas?: number;
    observedGeneration?: number;
    conditions?: { type: string; status: string; reason?: string; message?: string }[];
  };
}

export interface Pass {
  /** The TerdutServer as read at the start of this pass (kept current after our own writes). */
  server: TerdutServer;
  conditions: ConditionSet;
  /** Status fields other than conditions, as this pass computes them. */
  status: {
    credentialsSecretRef?: { name: string; key: string };
    url?: string;
    /** The Deployment's pods and their selector, for the scale subresource. */
    replicas?: number;
    selector?: string;
  };
  /** Set by the database step. */
  databaseEnv?: EnvVar[];
  /** Set by the workload step: the Deployment as applied. */
  deployment?: Deployment;
  /** Set by the workload step when the Deployment controller gave up on rolling out the current spec. */
  rolloutStuck?: string;
  /** Why the pass failed (it is retried), for a condition it could not determine. */
  failure?: string;
  /** Set when a create was refused because the namespace is being deleted: why the pass ended. */
  namespaceTerminating?: string;
}

/** Ends the pass; with `requeueAfterMs`, look again then (else wait for a watch event). */
export interface Stop {
  stop: true;
  requeueAfterMs?: number;
}

export type StepResult = Stop | undefined;

export const stop = (requeueAfterMs?: number): Stop => ({ stop: true, requeueAfterMs });

export const decode = (value: string | undefined): string | undefined =>
  value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
export const encode = (value: string): string => Buffer.from(value, 'utf8').toString('base64');
