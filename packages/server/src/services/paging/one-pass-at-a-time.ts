/**
 * Runs a pass so that two never overlap in this process: a call while one
 * runs gets the next pass, which starts when the running one ends; calls
 * while that one waits share it. Every caller so gets a pass that starts
 * after its call, and at most one waits.
 *
 * Why (paging.ts): the poll and the wake after each new incident both ran
 * escalation passes, side by side in an alert storm; both walked the same
 * due escalations in the same order, and half the transactions found the
 * incident locked by the other pass (SKIP LOCKED) and did nothing: three
 * round trips per new incident for nothing (bench/README.md).
 */
export class OnePassAtATime<T> {
  readonly #pass: () => Promise<T>;
  #running: Promise<T> | undefined;
  #waiting: Promise<T> | undefined;

  constructor(pass: () => Promise<T>) {
    this.#pass = pass;
  }

  run(): Promise<T> {
    if (this.#waiting !== undefined) return this.#waiting;
    const running = this.#running;
    if (running === undefined) return this.#start();
    const next = running.then(
      () => this.#startWaiting(),
      () => this.#startWaiting(),
    );
    this.#waiting = next;
    return next;
  }

  #startWaiting(): Promise<T> {
    this.#waiting = undefined;
    return this.#start();
  }

  #start(): Promise<T> {
    const running = this.#pass().finally(() => {
      if (this.#running === running) this.#running = undefined;
    });
    this.#running = running;
    return running;
  }
}
