/**
 * A fault injector (not a stand-in for anything): a TCP proxy in front of
 * the API server that can stall — from `stall()` on it forwards nothing more
 * in either direction and holds new connections open without answering, as a
 * partitioned network or a wedged load balancer does. TLS passes through.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export class StallingProxy {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #stalled = false;

  private constructor(upstream: URL) {
    this.#server = createServer((client) => {
      this.#sockets.add(client);
      client.on('close', () => this.#sockets.delete(client));
      client.on('error', () => {});
      if (this.#stalled) {
        client.pause();
        return;
      }
      const server = connect(Number(upstream.port), upstream.hostname);
      this.#sockets.add(server);
      server.on('close', () => this.#sockets.delete(server));
      server.on('error', () => client.destroy());
      client.pipe(server);
      server.pipe(client);
    });
  }

  /** Listens on loopback in front of `upstream` (an https:// URL with a port). */
  static async start(upstream: string): Promise<StallingProxy> {
    const proxy = new StallingProxy(new URL(upstream));
    await new Promise<void>((resolve) => proxy.#server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.#server.address() as AddressInfo).port;
  }

  /** From now on nothing passes, and nothing is closed. */
  stall(): void {
    this.#stalled = true;
    for (const socket of this.#sockets) {
      socket.unpipe();
      socket.pause();
    }
  }

  async stop(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
