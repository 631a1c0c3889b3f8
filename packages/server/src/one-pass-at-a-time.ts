/**
 * Runs a pass so that two never overlap in this process: a call while one
 * runs gets the next pass, which starts when the running one ends; calls
 * while that one waits share it. Every caller so gets a pass that starts
 * after its call, and at most one waits.
 *
 * Users: the paging worker's escalation passes (the poll's and the wakes'
 * take turns) and its wakes (services/paging/paging.ts), and the change
 * feed's NOTIFYs (routes/events/change-feed.ts).
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

  /** Resolves once no pass runs or waits, however they end (shutdown, tests). */
  async idle(): Promise<void> {
    for (
      let pass = this.#waiting ?? this.#running;
      pass !== undefined;
      pass = this.#waiting ?? this.#running
    ) {
      await pass.then(
        () => undefined,
        () => undefined,
      );
    }
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
