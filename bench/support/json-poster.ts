/**
 * The benchmarks' load generator: posts JSON over kept-alive connections
 * with `node:http`. The load generator shares the machine's two cores with
 * the server and the database, and Node's fetch took 0.6–0.75 ms of CPU per
 * small notification, a fifth of everything a 1-alert notification cost;
 * Alertmanager (Go's net/http) sends from another machine. `node:http` does
 * the same POST for about a third of that (bench/README.md), so more of the
 * machine measures the server.
 */
import http from 'node:http';

export interface PostAnswer {
  status: number;
  text: string;
}

export class JsonPoster {
  readonly #url: URL;
  readonly #headers: Record<string, string>;
  readonly #agent: http.Agent;
  readonly #timeoutMs: number;

  /** `url`: where every post goes; `headers`: sent with each (authorization, say). */
  constructor(url: string, headers: Record<string, string>, options: { timeoutMs?: number } = {}) {
    this.#url = new URL(url);
    this.#headers = { 'content-type': 'application/json', ...headers };
    // Each sender waits for its answer before posting again, so a socket per sender, reused.
    this.#agent = new http.Agent({ keepAlive: true });
    this.#timeoutMs = options.timeoutMs ?? 60_000;
  }

  /** Posts `body` as JSON; answers the status and the body's text, whatever the status. */
  #post(body: unknown): Promise<PostAnswer> {
    const payload = Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const request = http.request(
        this.#url,
        {
          method: 'POST',
          agent: this.#agent,
          headers: { ...this.#headers, 'content-length': payload.length },
          timeout: this.#timeoutMs,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
          );
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${this.#timeoutMs} ms`)));
      request.on('error', reject);
      request.end(payload);
    });
  }

  /** Posts `body` and throws unless the answer's status is one of `expected`. */
  async postExpecting(body: unknown, expected: readonly number[]): Promise<PostAnswer> {
    const answer = await this.#post(body);
    if (!expected.includes(answer.status)) {
      throw new Error(`${this.#url.pathname} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    }
    return answer;
  }
}
