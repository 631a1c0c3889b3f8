import type { onRequestAsyncHookHandler } from 'fastify';

/**
 * Bodies under this size are read at once, whatever else is in flight: they
 * cost little memory, and a small notification must never wait behind a
 * storm's large ones.
 */
export const SMALL_BODY_BYTES = 64 * 1024;

/**
 * A budget of request-body bytes in flight, handed out first come, first
 * served.
 *
 * The server's heap is capped (`--max-old-space-size`), and a large
 * notification takes about 2.5 times its size in heap while it is parsed
 * and written (bench/README.md, "Memory"). Without a bound, enough large
 * bodies posted at once would exhaust the heap and end the process. With it,
 * they wait their turn with their bytes still unread in the socket, and are
 * all answered.
 */
export class BodyBudget {
  readonly #capacity: number;
  #inUse = 0;
  readonly #waiting: { bytes: number; grant: () => void }[] = [];

  constructor(capacityBytes: number) {
    this.#capacity = capacityBytes;
  }

  /** Bytes handed out now. */
  get inUse(): number {
    return this.#inUse;
  }

  /**
   * Resolves once `bytes` fit; a body larger than the whole budget goes
   * alone, when nothing else is in flight. The returned function gives the
   * bytes back (calling it again does nothing). If `signal` aborts first, the
   * wait ends with its reason and nothing is held.
   */
  acquire(bytes: number, signal?: AbortSignal): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const entry = {
        bytes,
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          this.#inUse += bytes;
          let released = false;
          resolve(() => {
            if (released) return;
            released = true;
            this.#inUse -= bytes;
            this.#grantWaiting();
          });
        },
      };
      const onAbort = () => {
        const index = this.#waiting.indexOf(entry);
        if (index !== -1) this.#waiting.splice(index, 1);
        reject(abandoned(signal));
        // The next in line may fit now that this one left the head.
        this.#grantWaiting();
      };
      if (signal?.aborted) {
        reject(abandoned(signal));
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(entry);
      this.#grantWaiting();
    });
  }

  #fits(bytes: number): boolean {
    return this.#inUse === 0 || this.#inUse + bytes <= this.#capacity;
  }

  // In arrival order: a large body at the head is not overtaken by smaller ones behind it.
  #grantWaiting(): void {
    while (this.#waiting.length > 0 && this.#fits(this.#waiting[0]!.bytes)) this.#waiting.shift()!.grant();
  }
}

function abandoned(signal: AbortSignal | undefined): Error {
  return signal?.reason instanceof Error
    ? signal.reason
    : new Error('the wait for the body budget was abandoned');
}

/**
 * How long a body that was let in has to arrive in full. Alertmanager sends
 * the largest notification (8 MiB) in well under a second; at this, a body
 * still arriving at 280 KB/s makes it.
 */
export const BODY_ARRIVAL_MS = 30_000;

/**
 * An `onRequest` hook that holds a request until its body fits in `budget`
 * (sized by Content-Length, or the route's body limit when it has none) and
 * gives the bytes back when the response ends or the connection closes.
 * Register it after authentication, so only authenticated requests take a
 * share.
 *
 * A body let in must then keep coming: one that has not arrived in full
 * within `arrivalMs` is answered 408 and its connection closed, so that
 * clients trickling a byte at a time cannot hold the budget and keep every
 * large notification behind them waiting.
 */
export function limitBodiesInFlight(
  budget: BodyBudget,
  options: { arrivalMs?: number } = {},
): onRequestAsyncHookHandler {
  const arrivalMs = options.arrivalMs ?? BODY_ARRIVAL_MS;
  return async (request, reply) => {
    const { bodyLimit } = request.routeOptions;
    const declared = Number(request.headers['content-length']);
    const bytes = Number.isFinite(declared) && declared >= 0 ? Math.min(declared, bodyLimit) : bodyLimit;
    if (bytes < SMALL_BODY_BYTES) return;
    // A client that gives up while waiting leaves the queue.
    const gone = new AbortController();
    const onClose = () => gone.abort(new Error('the client closed the connection while its request waited'));
    reply.raw.once('close', onClose);
    const release = await budget.acquire(bytes, gone.signal);
    reply.raw.off('close', onClose);
    // Closed between the grant and here: nothing will be read or answered.
    if (gone.signal.aborted) {
      release();
      return;
    }
    reply.raw.once('close', release);
    if (request.raw.complete) return;
    const cutOff = setTimeout(() => {
      if (request.raw.complete || reply.raw.headersSent) return;
      request.log.warn(
        { bytes, arrivalMs },
        'request body did not arrive in time after it was let in; answered 408 and closed',
      );
      reply.raw.writeHead(408, { 'content-type': 'application/json; charset=utf-8', connection: 'close' });
      reply.raw.end(
        JSON.stringify({
          error: `the request body did not arrive within ${arrivalMs / 1000} s of being read; send it faster`,
        }),
        () => request.raw.socket.destroy(),
      );
    }, arrivalMs);
    request.raw.once('end', () => clearTimeout(cutOff));
    reply.raw.once('close', () => clearTimeout(cutOff));
  };
}
