/**
 * The HTTP floor of `bench:intake-floor`: `bare-intake-server.ts` in a child
 * process, driven by the intake benchmarks' senders with new groups of one
 * size. What it reaches is the most any HTTP intake that commits before it
 * answers can reach on this machine, whatever its code.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ChildProcessGroup, freeLoopbackPort, waitUntil } from '../../test/peers/child-processes.ts';
import { notificationOfSize } from '../../test/support/alertmanager-payloads.ts';
import { drive, type Measured } from './intake-load.ts';
import { JsonHttp } from './json-http.ts';
import { RAW_TABLE } from './raw-inserts.ts';

/** `answer`: parse and answer; `insert`: one INSERT per notification; `gathered`: group commit. */
export type BareMode = 'answer' | 'insert' | 'gathered';

const SERVER_SCRIPT = fileURLToPath(new URL('./bare-intake-server.ts', import.meta.url));

/** New groups of `size` alerts posted to a bare intake server storing into `url` (an empty database). */
export async function bareIntakeRate(url: string, mode: BareMode, size: number): Promise<Measured> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(RAW_TABLE);
  await setup.end();
  const port = await freeLoopbackPort();
  const processes = new ChildProcessGroup();
  const server = processes.spawn({
    name: 'bare intake server',
    command: process.execPath,
    args: [SERVER_SCRIPT],
    logPath: join(tmpdir(), `terdut-bench-bare-intake-${port}.log`),
    env: { ...process.env, BARE_PORT: String(port), BARE_DATABASE_URL: url, BARE_MODE: mode },
  });
  try {
    const poster = new JsonHttp(`http://127.0.0.1:${port}/`, {});
    const probe = notificationOfSize(1, { name: 'BareProbe', groupKey: 'BareProbe' });
    await waitUntil(async () => (await poster.postExpecting(probe, [200])).status === 200, {
      timeoutMs: 10_000,
      describe: () => `the bare intake server did not answer on port ${port}`,
      child: server,
    });
    return await drive(async (worker, sequence) => {
      const name = `Bare${size}x${worker}n${sequence}`;
      await poster.postExpecting(notificationOfSize(size, { name, groupKey: name }), [200]);
      return size;
    });
  } finally {
    await processes.stop();
  }
}
