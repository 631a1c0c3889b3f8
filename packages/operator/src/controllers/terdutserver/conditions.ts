/**
 * The conditions of one reconcile pass, in metav1.Condition shape. A
 * condition whose status did not change keeps its lastTransitionTime, so
 * writing the same state again is a no-op the status step can skip.
 */
import type { Condition, ConditionType } from '../../api/v1alpha1/terdutserver.ts';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export class ConditionSet {
  readonly #previous: Map<string, Condition>;
  readonly #current = new Map<string, Condition>();
  readonly #now: () => Date;
  /** The metadata.generation this pass's conditions are computed from. */
  readonly generation: number;

  constructor(previous: Condition[] | undefined, generation: number, now: () => Date = () => new Date()) {
    this.#previous = new Map((previous ?? []).map((condition) => [condition.type, condition]));
    this.generation = generation;
    this.#now = now;
  }

  set(type: ConditionType, status: ConditionStatus, reason: string, message: string): void {
    const before = this.#previous.get(type);
    this.#current.set(type, {
      type,
      status,
      reason,
      message,
      observedGeneration: this.generation,
      lastTransitionTime:
        before && before.status === status
          ? before.lastTransitionTime
          : this.#now()
              .toISOString()
              .replace(/\.\d+Z$/, 'Z'),
    });
  }

  /** This pass's value, else the previous one (a step that did not run leaves it as it was). */
  get(type: ConditionType): Condition | undefined {
    return this.#current.get(type) ?? this.#previous.get(type);
  }

  isTrue(type: ConditionType): boolean {
    return this.get(type)?.status === 'True';
  }

  /** Did `type` change status or reason in this pass? */
  changed(type: ConditionType): boolean {
    const now = this.#current.get(type);
    const before = this.#previous.get(type);
    return now !== undefined && (now.status !== before?.status || now.reason !== before?.reason);
  }

  /** Every condition, in a stable order, for the status subresource. */
  toList(order: readonly ConditionType[]): Condition[] {
    return order.map((type) => this.get(type)).filter((c): c is Condition => c !== undefined);
  }
}
