/**
 * The README's Alertmanager configuration, as a new team copies it: a real
 * Alertmanager loads it (it refuses a configuration it cannot use) and its
 * notifications open and resolve an incident in a real terdut-server on the
 * embedded database. Only what the README tells people to change is changed
 * (the URL, the key file), and the group's timings are shortened so the test
 * sees its notifications within seconds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Incident } from '@terdut/contract';
import { startAlertmanagerWithConfig, type RunningAlertmanager } from '../peers/alertmanager.ts';
import { ChildProcessGroup, repoRoot, waitUntil } from '../peers/child-processes.ts';
import { startServerProcess, TEST_BOOTSTRAP_TOKEN, type RunningServer } from '../support/server-process.ts';

const processes = new ChildProcessGroup();
const dir = mkdtempSync(join(tmpdir(), 'terdut-readme-am-'));
let server: RunningServer;
let alertmanager: RunningAlertmanager | undefined;
let apiKey: string;

/** The first YAML block after the README's "Point Alertmanager at the webhook". */
function readmeAlertmanagerConfig(): string {
  const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
  const from = readme.indexOf('Point Alertmanager at the webhook');
  assert.ok(from >= 0, 'the README no longer says how to point Alertmanager at the webhook');
  const block = /```yaml\n([\s\S]*?)```/.exec(readme.slice(from));
  assert.ok(block, 'no yaml block after "Point Alertmanager at the webhook"');
  return block[1]!;
}

before(async () => {
  server = await startServerProcess({ processes });
  const bootstrap = await fetch(`${server.url}/api/bootstrap`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TEST_BOOTSTRAP_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', email: 'admin@example.com' }),
  });
  assert.equal(bootstrap.status, 201, await bootstrap.clone().text());
  apiKey = ((await bootstrap.json()) as { api_key: { key: string } }).api_key.key;
});

after(async () => {
  await alertmanager?.stop();
  await server?.stop();
  await processes.stop();
  rmSync(dir, { recursive: true, force: true });
});

test("the README's Alertmanager configuration loads in a real Alertmanager and its alerts open and resolve an incident", async () => {
  const keyFile = join(dir, 'terdut-api-key');
  writeFileSync(keyFile, apiKey);
  const documented = readmeAlertmanagerConfig();
  const config = documented
    .replace('https://terdut.example.com', server.url)
    .replace('/etc/alertmanager/terdut-api-key', keyFile)
    .replace(/^route:\n/m, 'route:\n  group_wait: 1s\n  group_interval: 1s\n');
  for (const changed of [server.url, keyFile]) assert.ok(config.includes(changed), changed);
  alertmanager = await startAlertmanagerWithConfig(config);

  const alert = { labels: { alertname: 'ReadmeDiskFull', namespace: 'shop', severity: 'critical' } };
  await alertmanager.postAlerts([alert]);
  const headers = { authorization: `Bearer ${apiKey}` };
  let incident: Incident | undefined;
  await waitUntil(
    async () => {
      const open = (await (await fetch(`${server.url}/api/incidents`, { headers })).json()) as Incident[];
      incident = open.find((one) => one.group_key.includes('ReadmeDiskFull'));
      return incident !== undefined;
    },
    {
      timeoutMs: 30_000,
      describe: () => `no incident from Alertmanager (its log: ${alertmanager!.logPath})`,
    },
  );
  // Grouped as the README says: by alertname and namespace.
  assert.match(incident!.group_key, /alertname="ReadmeDiskFull"/);
  assert.match(incident!.group_key, /namespace="shop"/);

  await alertmanager.postAlerts([{ ...alert, endsAt: new Date(Date.now() - 1000).toISOString() }]);
  await waitUntil(
    async () => {
      const answer = await fetch(`${server.url}/api/incidents/${incident!.id}`, { headers });
      return ((await answer.json()) as Incident).status === 'resolved';
    },
    {
      timeoutMs: 30_000,
      describe: () => 'the incident did not resolve when Alertmanager resolved its alert',
    },
  );
});
