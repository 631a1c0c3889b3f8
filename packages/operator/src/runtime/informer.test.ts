/**
 * The informer against a scripted API server (node:http): the parts a real
 * kube-apiserver does not produce on demand — a 410 Gone in the middle of a
 * watch, a failing list — with the real HTTP transport.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { Informer, type InformerEventType } from './informer.ts';
import { KubeClient, type KubeObject } from './kube-client.ts';

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL) => void;

async function fakeApiServer(handler: Handler) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(
      `${url.searchParams.get('watch') ? 'watch' : 'list'} rv=${url.searchParams.get('resourceVersion') ?? ''}`,
    );
    handler(req, res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [
      {
        name: 'fake',
        server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        skipTLSVerify: true,
      },
    ],
    users: [{ name: 'u' }],
    contexts: [{ name: 'c', cluster: 'fake', user: 'u' }],
    currentContext: 'c',
  });
  return {
    client: new KubeClient(config),
    requests,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const object = (name: string, rv: string): KubeObject => ({
  metadata: { namespace: 'ns', name, resourceVersion: rv },
});
const list = (res: ServerResponse, rv: string, items: KubeObject[]) =>
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end(JSON.stringify({ metadata: { resourceVersion: rv }, items }));

test('after 410 Gone the informer lists again and delivers what it missed, including a deletion', async () => {
  let lists = 0;
  let watches = 0;
  const api = await fakeApiServer((_req, res, url) => {
    if (!url.searchParams.get('watch')) {
      lists += 1;
      // The second list: b was deleted and c created while the watch was gone.
      return lists === 1
        ? list(res, '10', [object('a', '1'), object('b', '2')])
        : list(res, '20', [object('a', '1'), object('c', '15')]);
    }
    watches += 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    if (watches === 1) {
      res.write(`${JSON.stringify({ type: 'MODIFIED', object: object('a', '11') })}\n`);
      res.end(
        `${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } })}\n`,
      );
    }
    // Later watches stay open until the test stops the informer.
  });
  const events: string[] = [];
  const informer = new Informer<KubeObject>(api.client, {
    name: 'test',
    path: '/api/v1/secrets',
    onEvent: (type: InformerEventType, o) => events.push(`${type} ${o.metadata.name}`),
  });
  const abort = new AbortController();
  const running = informer.run(abort.signal);
  assert.equal(informer.synced, false);
  await informer.waitForSync();
  while (watches < 2) await new Promise((resolve) => setTimeout(resolve, 20));
  abort.abort();
  await running;
  api.close();

  assert.deepEqual(events, ['added a', 'added b', 'updated a', 'updated a', 'added c', 'deleted b']);
  assert.deepEqual(
    informer
      .list()
      .map((o) => o.metadata.name)
      .sort(),
    ['a', 'c'],
  );
  assert.deepEqual(api.requests, ['list rv=', 'watch rv=10', 'list rv=', 'watch rv=20']);
});

test('a failing list is retried after a delay and the informer is ready only after a complete list', async () => {
  let lists = 0;
  const api = await fakeApiServer((_req, res, url) => {
    if (!url.searchParams.get('watch')) {
      lists += 1;
      if (lists === 1)
        return res.writeHead(500).end('{"message":"etcd unavailable","reason":"InternalError"}');
      return list(res, '5', [object('a', '1')]);
    }
    res.writeHead(200, { 'content-type': 'application/json' });
  });
  const errors: string[] = [];
  const informer = new Informer<KubeObject>(api.client, {
    name: 'test',
    path: '/api/v1/secrets',
    onEvent: () => {},
    onError: (error) => errors.push((error as Error).message),
  });
  const abort = new AbortController();
  const started = Date.now();
  const running = informer.run(abort.signal);
  await informer.waitForSync();
  const waited = Date.now() - started;
  abort.abort();
  await running;
  api.close();
  assert.equal(lists, 2);
  assert.match(errors[0]!, /etcd unavailable/);
  assert.ok(waited >= 200, `retried after a jittered delay, not at once (${waited} ms)`);
  assert.equal(informer.get('ns/a')?.metadata.resourceVersion, '1');
});
