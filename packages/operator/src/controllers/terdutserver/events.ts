/**
 * Kubernetes Events (events.k8s.io/v1) about a TerdutServer: what a person
 * running `kubectl describe` should know. Reconcile steps record an event on
 * a transition, not on every pass, so a settled operator writes nothing.
 */
import { randomBytes } from 'node:crypto';
import { apiVersion, kind, type TerdutServer } from '../../api/v1alpha1/terdutserver.ts';
import { resourcePath, resources, type KubeClient } from '../../runtime/kube-client.ts';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  record(server: TerdutServer, type: EventType, reason: string, note: string): Promise<void>;
}

/** An event the API server refused, for the log. */
export interface UnrecordedEvent {
  regarding: string;
  type: EventType;
  reason: string;
  note: string;
}

export class KubeEventRecorder implements EventRecorder {
  readonly #client: KubeClient;
  readonly #instance: string;
  readonly #onError: (error: unknown, event: UnrecordedEvent) => void;

  /**
   * `onError` gets what could not be recorded, so that the operator's log
   * still says it: in a namespace being deleted the API server refuses every
   * new Event, among them the one naming keys a deletion could not revoke.
   */
  constructor(
    client: KubeClient,
    instance: string,
    onError: (error: unknown, event: UnrecordedEvent) => void = () => {},
  ) {
    this.#client = client;
    this.#instance = instance;
    this.#onError = onError;
  }

  /** Best effort: a lost event must not fail the reconcile. */
  async record(server: TerdutServer, type: EventType, reason: string, note: string): Promise<void> {
    const now = new Date().toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
    try {
      await this.#client.create(resourcePath(resources.events, server.metadata.namespace), {
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: {
          name: `${server.metadata.name}.${randomBytes(8).toString('hex')}`,
          namespace: server.metadata.namespace,
        },
        eventTime: now,
        type,
        reason,
        action: reason,
        note: note.slice(0, 1024),
        reportingController: 'terdut.ryuvia.com/terdut-operator',
        reportingInstance: this.#instance.slice(0, 128),
        regarding: {
          apiVersion,
          kind,
          name: server.metadata.name,
          namespace: server.metadata.namespace,
          uid: server.metadata.uid,
        },
      });
    } catch (error) {
      this.#onError(error, {
        regarding: `${server.metadata.namespace}/${server.metadata.name}`,
        type,
        reason,
        note,
      });
    }
  }
}
