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

export class KubeEventRecorder implements EventRecorder {
  readonly #client: KubeClient;
  readonly #instance: string;
  readonly #onError: (error: unknown) => void;

  constructor(client: KubeClient, instance: string, onError: (error: unknown) => void = () => {}) {
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
      this.#onError(error);
    }
  }
}
