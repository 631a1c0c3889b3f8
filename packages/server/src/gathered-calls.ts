/** A call waiting for its batch, with how to answer its caller. */
interface WaitingCall<I, O> {
  item: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Calls that go to the database in batches, as a database's group commit
 * does: a call made while `limit` batches are in flight waits, and every
 * call that waited goes in the next batch, in one statement. A call made
 * while fewer are in flight goes at once, alone, so a quiet server adds
 * no wait to anyone's call.
 *
 * When a batch of several fails, each of its calls is run again alone, so
 * one bad call fails only its own caller.
 *
 * User: the intake's new groups (services/intake.ts).
 */
export class GatheredCalls<I, O> {
  readonly #run: (items: I[]) => Promise<O[]>;
  readonly #limit: number;
  readonly #maxBatch: number;
  readonly #waiting: WaitingCall<I, O>[] = [];
  #inFlight = 0;

  /**
   * `run` answers one output per item, in the items' order, or throws for
   * the whole batch; `limit`: batches in flight at most; `maxBatch`: items
   * in one batch at most.
   */
  constructor(options: { run: (items: I[]) => Promise<O[]>; limit: number; maxBatch: number }) {
    this.#run = options.run;
    this.#limit = options.limit;
    this.#maxBatch = options.maxBatch;
  }

  call(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#startBatches();
    });
  }

  #startBatches(): void {
    while (this.#inFlight < this.#limit && this.#waiting.length > 0) {
      const batch = this.#waiting.splice(0, this.#maxBatch);
      this.#inFlight += 1;
      void this.#runBatch(batch).finally(() => {
        this.#inFlight -= 1;
        this.#startBatches();
      });
    }
  }

  async #runBatch(batch: WaitingCall<I, O>[]): Promise<void> {
    try {
      const outputs = await this.#run(batch.map((call) => call.item));
      batch.forEach((call, index) => call.resolve(outputs[index]!));
      return;
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error);
        return;
      }
    }
    for (const call of batch) {
      try {
        call.resolve((await this.#run([call.item]))[0]!);
      } catch (error) {
        call.reject(error);
      }
    }
  }
}
