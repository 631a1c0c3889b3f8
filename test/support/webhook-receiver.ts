/**
 * A receiver for terdut's outgoing webhook (a real HTTP server on loopback,
 * standing in for a chat bot or SMS gateway): records every request and
 * answers what the test says. It can listen on a port chosen in advance, so
 * a test can point terdut at a port where nothing listens yet ("provider
 * down", connection refused) and start the receiver there later.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
  body: any;
}

export interface WebhookReceiver {
  url: string;
  port: number;
  readonly received: ReceivedWebhook[];
  /** The status of the next answers (default 200), with these headers besides the content type. */
  answer(status: number, headers?: Record<string, string>): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(port = 0): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let status = 200;
  let extraHeaders: Record<string, string> = {};
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(rawBody);
      } catch {
        body = undefined;
      }
      received.push({ headers: req.headers, rawBody, body });
      res.writeHead(status, { 'content-type': 'application/json', ...extraHeaders });
      res.end(
        JSON.stringify(status < 300 ? { id: `rcv-${received.length}` } : { error: 'receiver refuses' }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}/hook`,
    port: bound,
    received,
    answer(next, headers = {}) {
      status = next;
      extraHeaders = headers;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
