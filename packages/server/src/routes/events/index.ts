import type { FastifyInstance } from 'fastify';
import type { ServerResponse } from 'node:http';
import { principalOf } from '../../http/authentication.ts';
import { changesOfWrite, type Change, type ChangeFeed } from './change-feed.ts';
import { access } from '../../http/route-auth.ts';
import { Type } from 'typebox';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Comments keep proxies from closing an idle stream. */
const KEEPALIVE_MS = 25_000;
/**
 * A stream is closed after this long and the browser reconnects, which
 * authenticates again: a signed-out or expired session stops hearing changes
 * within this bound.
 */
const STREAM_LIFETIME_MS = 5 * 60_000;

/**
 * Announces every successful write to incidents, alerts (the webhook) and the
 * schedule to all replicas. `onResponse` runs after the answer, which the
 * routes send only after their transaction committed, so a listener that
 * refetches sees the new state.
 */
export function installChangeAnnouncements(app: FastifyInstance, feed: ChangeFeed): void {
  app.addHook('onResponse', async (request, reply) => {
    if (!WRITE_METHODS.has(request.method) || reply.statusCode >= 300) return;
    const changes = changesOfWrite(request.url.split('?')[0]!);
    if (changes.length > 0) await feed.announce(changes);
  });
}

/**
 * `GET /api/events`: a server-sent events stream of `change` events
 * (`{"topic","incident_id"?}`) for whoever is signed in (session cookie or API
 * key). A `ready` event says the stream listens; a client refetches then, so
 * nothing changed during a reconnect is missed.
 */
export function eventRoutes(feed: ChangeFeed) {
  return async (app: FastifyInstance): Promise<void> => {
    const streams = new Set<ServerResponse>();
    // Open streams never finish by themselves; close them so shutdown does not wait for them.
    app.addHook('preClose', async () => {
      for (const stream of streams) stream.end();
      await feed.close();
    });

    app.get(
      '/api/events',
      {
        config: { auth: access.signedIn },
        schema: {
          tags: ['events'],
          summary: 'Live changes as server-sent events (text/event-stream): `change` {topic, incident_id?}',
          description:
            'Topics: `incidents`, `alerts`, `schedule`. A `ready` event follows the subscription. The server ends ' +
            'a stream after 5 minutes; EventSource reconnects by itself.',
          // Documentation only: the handler writes the stream itself (hijack), nothing is serialised.
          response: {
            200: {
              description: 'a text/event-stream that stays open (up to 5 minutes) and sends `change` events',
              content: { 'text/event-stream': { schema: Type.String() } },
            },
          },
        },
      },
      async (request, reply) => {
        principalOf(request);
        reply.hijack();
        const stream = reply.raw;
        stream.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-accel-buffering': 'no',
          // Ending a stream (lifetime, shutdown) closes its connection rather than leaving it
          // keep-alive, where shutdown would wait for it to time out.
          connection: 'close',
        });
        stream.write('retry: 2000\n\n');
        const send = (change: Change) => stream.write(`event: change\ndata: ${JSON.stringify(change)}\n\n`);
        streams.add(stream);
        let unsubscribe: () => void = () => {};
        const keepalive = setInterval(() => stream.write(': keepalive\n\n'), KEEPALIVE_MS);
        const lifetime = setTimeout(() => stream.end(), STREAM_LIFETIME_MS);
        stream.once('close', () => {
          clearInterval(keepalive);
          clearTimeout(lifetime);
          streams.delete(stream);
          unsubscribe();
        });
        try {
          unsubscribe = await feed.subscribe(send);
          if (stream.writableEnded) unsubscribe();
          else stream.write('event: ready\ndata: {}\n\n');
        } catch (error) {
          request.log.warn(
            { err: error },
            'live updates unavailable: cannot LISTEN; the web app polls instead',
          );
          stream.end();
        }
      },
    );
  };
}
