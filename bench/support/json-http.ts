/**
 * The benchmarks' HTTP client: JSON over kept-alive connections with
 * `node:http`. The client shares the machine's two cores with the server
 * and the database, and Node's fetch took 0.6–0.75 ms of CPU per small
 * notification, a fifth of everything a 1-alert notification cost;
 * Alertmanager (Go's net/http) sends from another machine, and a browser
 * or a script reads the queue from another machine too. `node:http` does
 * the same request for about a third of that (bench/README.md), so more of
 * the machine measures the server.
 */
import http from 'node:http';

export interface HttpAnswer {
  status: number;
  text: string;
}

/** One URL, its headers, and a kept-alive socket per request in flight. */
export class JsonHttp {
  readonly #url: URL;
  readonly #headers: Record<string, string>;
  readonly #agent: http.Agent;
  readonly #timeoutMs: number;

  /** `url`: where every request goes; `headers`: sent with each (authorization, say). */
  constructor(url: string, headers: Record<string, string>, options: { timeoutMs?: number } = {}) {
    this.#url = new URL(url);
    this.#headers = headers;
    // Each sender waits for its answer before sending again, so a socket per sender, reused.
    this.#agent = new http.Agent({ keepAlive: true });
    this.#timeoutMs = options.timeoutMs ?? 60_000;
  }

  /** Sends the request (with `body` as JSON, if any); answers the status and the body's text, whatever the status. */
  #send(method: 'GET' | 'POST', body?: unknown): Promise<HttpAnswer> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers =
      payload === undefined
        ? this.#headers
        : { ...this.#headers, 'content-type': 'application/json', 'content-length': payload.length };
    return new Promise((resolve, reject) => {
      const request = http.request(
        this.#url,
        { method, agent: this.#agent, headers, timeout: this.#timeoutMs },
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
  async postExpecting(body: unknown, expected: readonly number[]): Promise<HttpAnswer> {
    return this.#expecting(await this.#send('POST', body), expected);
  }

  /** GETs the URL and throws unless the answer's status is one of `expected`. */
  async getExpecting(expected: readonly number[]): Promise<HttpAnswer> {
    return this.#expecting(await this.#send('GET'), expected);
  }

  #expecting(answer: HttpAnswer, expected: readonly number[]): HttpAnswer {
    if (!expected.includes(answer.status)) {
      throw new Error(`${this.#url.pathname} answered ${answer.status}: ${answer.text.slice(0, 300)}`);
    }
    return answer;
  }
}
