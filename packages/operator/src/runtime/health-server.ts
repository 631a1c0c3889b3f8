/**
 * `/healthz` (the process and its event loop answer), `/readyz` (the
 * caller's readiness check passes, e.g. informers synced) and `/metrics`
 * (Prometheus text) on one small HTTP server.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';

export interface HealthServer {
  /** `http://host:port` it listens on. */
  url: string;
  close(): Promise<void>;
}

/** Parses `:8081`, `127.0.0.1:0`, `0.0.0.0:9090`. */
export function parseListenAddress(address: string): { host: string; port: number } {
  const match = /^(.*):(\d+)$/.exec(address);
  if (!match) throw new Error(`"${address}" is not a listen address; use host:port or :port`);
  return { host: match[1] || '0.0.0.0', port: Number(match[2]) };
}

export async function startHealthServer(options: {
  address: string;
  ready: () => boolean;
  registry?: Registry;
}): Promise<HealthServer> {
  const { host, port } = parseListenAddress(options.address);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
    } else if (path === '/readyz') {
      const ready = options.ready();
      res.writeHead(ready ? 200 : 503, { 'content-type': 'text/plain' }).end(ready ? 'ok\n' : 'not ready\n');
    } else if (path === '/metrics' && options.registry) {
      const registry = options.registry;
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    } else {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const bound = server.address() as AddressInfo;
  return {
    url: `http://${bound.address.includes(':') ? `[${bound.address}]` : bound.address}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
