/**
 * Proves the test Alertmanager is the real program doing real work: it takes
 * alerts on its v2 API and delivers webhook notifications (firing, then
 * resolved) carrying the API key, and it does not outlive the process that
 * started it. Delivery into terdut-server itself is test/e2e/alertmanager.test.ts.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { startAlertmanager, type RunningAlertmanager } from './alertmanager.ts';
import { isProcessAlive, repoRoot, waitUntil } from './child-processes.ts';

interface Delivery {
  headers: IncomingHttpHeaders;
  body: {
    version: string;
    status: string;
    groupKey: string;
    alerts: { status: string; labels: Record<string, string> }[];
  };
}

describe('the test Alertmanager', () => {
  const deliveries: Delivery[] = [];
  let receiver: Server;
  let alertmanager: RunningAlertmanager;

  before(async () => {
    // A bare HTTP listener that records what Alertmanager sends: here the
    // subject is Alertmanager, not the receiver.
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        deliveries.push({
          headers: req.headers,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Delivery['body'],
        });
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolveListen) => receiver.listen(0, '127.0.0.1', resolveListen));
    const address = receiver.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    alertmanager = await startAlertmanager({
      webhookUrl: `http://127.0.0.1:${port}/hook`,
      apiKey: 'smoke-test-key',
    });
  });

  after(async () => {
    await alertmanager?.stop();
    receiver?.close();
  });

  test('delivers a firing and then a resolved webhook notification carrying the API key', async () => {
    const labels = { alertname: 'SmokeDiskFull', instance: 'db-1', severity: 'page' };
    await alertmanager.postAlerts([{ labels, annotations: { summary: 'disk is full' } }]);
    const stored = await alertmanager.alerts();
    assert.equal(stored.length, 1);

    await waitUntil(async () => deliveries.some((d) => d.body.status === 'firing'), {
      timeoutMs: 20_000,
      describe: () =>
        `no firing notification arrived; got ${JSON.stringify(deliveries.map((d) => d.body.status))}`,
    });
    const firing = deliveries.find((d) => d.body.status === 'firing');
    assert.equal(firing?.headers.authorization, 'Bearer smoke-test-key');
    assert.equal(firing?.body.version, '4');
    assert.deepEqual(
      firing?.body.alerts.map((a) => a.labels.instance),
      ['db-1'],
    );

    await alertmanager.postAlerts([{ labels, endsAt: new Date(Date.now() - 1000).toISOString() }]);
    await waitUntil(async () => deliveries.some((d) => d.body.status === 'resolved'), {
      timeoutMs: 20_000,
      describe: () =>
        `no resolved notification arrived; got ${JSON.stringify(deliveries.map((d) => d.body.status))}`,
    });
    const resolved = deliveries.find((d) => d.body.status === 'resolved');
    assert.equal(resolved?.body.groupKey, firing?.body.groupKey);
  });

  test('refuses an alert without labels with 422', async () => {
    const res = await fetch(`${alertmanager.url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ annotations: { no: 'labels' } }]),
    });
    assert.equal(res.status, 422, await res.text());
  });
});

describe('startAlertmanager', () => {
  test('an Alertmanager does not outlive a test process that is killed with SIGKILL', async () => {
    const helper = pathToFileURL(join(repoRoot, 'test/peers/alertmanager.ts')).href;
    const script = `
      const { startAlertmanager } = await import(${JSON.stringify(helper)});
      const am = await startAlertmanager({ webhookUrl: 'http://127.0.0.1:9/hook', apiKey: 'k' });
      process.stdout.write(JSON.stringify({ pid: am.pid }) + '\\n');
      setInterval(() => {}, 1000);
    `;
    const parent = spawn(process.execPath, ['--input-type=module', '-e', script], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const pid = await new Promise<number>((resolvePid, reject) => {
      let out = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString('utf8');
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolvePid((JSON.parse(line) as { pid: number }).pid);
      });
      parent.on('exit', (code) =>
        reject(new Error(`the helper process exited with ${code} before starting Alertmanager`)),
      );
    });
    assert.ok(isProcessAlive(pid), 'Alertmanager should be running while its parent lives');
    parent.kill('SIGKILL');
    await waitUntil(async () => !isProcessAlive(pid), {
      timeoutMs: 15_000,
      describe: () => `Alertmanager (pid ${pid}) is still running 15 s after its parent was killed`,
    });
  });
});
