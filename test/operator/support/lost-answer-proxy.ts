/**
 * A fault injector (not a stand-in for anything): an HTTP proxy between the
 * operator and one terdut-server that forwards every request and, for the
 * first request matching each rule, lets the server answer in full and then
 * drops that answer — the caller sees its connection close, exactly as when
 * a network loses a response after the server committed.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface DropRule {
  method: string;
  /** Matched against the request path (no query). */
  path: RegExp;
}

export class LostAnswerInjector {
  readonly #server: Server;
  readonly #rules: DropRule[];
  readonly #upstream: () => string | undefined;
  /** `METHOD /path` of each answer dropped, in order. */
  readonly dropped: string[] = [];

  private constructor(upstream: () => string | undefined, rules: DropRule[]) {
    this.#upstream = upstream;
    this.#rules = [...rules];
    this.#server = createServer((req, res) => {
      void this.#forward(req).then(
        (answer) => {
          const target = `${req.method} ${(req.url ?? '').split('?')[0]}`;
          const rule = this.#rules.findIndex(
            (r) => r.method === req.method && r.path.test((req.url ?? '').split('?')[0]!),
          );
          if (rule >= 0 && answer.status < 500) {
            this.#rules.splice(rule, 1);
            this.dropped.push(`${target} → ${answer.status}`);
            req.socket.destroy();
            return;
          }
          res.writeHead(answer.status, answer.headers);
          res.end(answer.body);
        },
        () => {
          res.writeHead(502);
          res.end();
        },
      );
    });
  }

  /** Listens on loopback; `upstream()` names the server's URL at the time of each request. */
  static async start(upstream: () => string | undefined, rules: DropRule[]): Promise<LostAnswerInjector> {
    const injector = new LostAnswerInjector(upstream, rules);
    await new Promise<void>((resolve) => injector.#server.listen(0, '127.0.0.1', resolve));
    return injector;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /** Rules that never matched. */
  get pending(): DropRule[] {
    return [...this.#rules];
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  async #forward(
    req: IncomingMessage,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
    const upstream = this.#upstream();
    if (!upstream) throw new Error('no upstream yet');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', upstream);
    return new Promise((resolve, reject) => {
      const out = request(url, { method: req.method, headers: { ...req.headers, host: url.host } }, (res) => {
        const body: Buffer[] = [];
        res.on('data', (chunk: Buffer) => body.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(body) }),
        );
        res.on('error', reject);
      });
      out.on('error', reject);
      out.end(Buffer.concat(chunks));
    });
  }
}
