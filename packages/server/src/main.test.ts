/**
 * `terdut-server serve` as a container's PID 1: a pod deleted while the
 * server is still starting (waiting for its database, running migrations)
 * stops at once instead of waiting out its grace period.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { once } from 'node:events';
import { childEnv, MAIN } from '@terdut/test-support';

// A PID namespace of its own makes the server its PID 1, as in a container; it needs root (CI runs as root).
const namespaces = spawnSync('unshare', ['--pid', '--fork', 'true']).status === 0;
const skip = namespaces ? false : 'needs `unshare --pid` (root) to run the server as PID 1';

// A "database" that accepts connections and never answers: the server waits in its startup.
const held: Socket[] = [];
const silentDatabase = createServer((socket) => held.push(socket));
after(() => {
  for (const socket of held) socket.destroy();
  silentDatabase.close();
});

test('SIGTERM while the server waits for its database ends it at once, even as PID 1', { skip }, async () => {
  silentDatabase.listen(0, '127.0.0.1');
  await once(silentDatabase, 'listening');
  const { port } = silentDatabase.address() as { port: number };
  const connected = once(silentDatabase, 'connection');
  const wrapper = spawn('unshare', ['--pid', '--fork', '--kill-child', process.execPath, MAIN, 'serve'], {
    env: childEnv({ DATABASE_URL: `postgres://terdut@127.0.0.1:${port}/terdut`, PORT: '0' }),
  });
  let output = '';
  wrapper.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  wrapper.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(wrapper, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  try {
    await connected;
    // The server is the wrapper's one child, PID 1 in its namespace: a signal from outside
    // reaches it only if it set a handler (pid_namespaces(7)).
    const children = readFileSync(`/proc/${wrapper.pid}/task/${wrapper.pid}/children`, 'utf8').trim();
    assert.match(children, /^\d+$/, 'the wrapper has one child, the server');
    const signalledAt = Date.now();
    process.kill(Number(children), 'SIGTERM');
    const [code] = await exited;
    const took = Date.now() - signalledAt;
    // Its connection attempt gives up after 10 s; the signal must not wait for that.
    assert.ok(took < 5_000, `stopped ${took} ms after SIGTERM; output:\n${output}`);
    assert.equal(code, 143, `exit code 128 + SIGTERM; output:\n${output}`);
    assert.match(output, /SIGTERM before the server was serving; stopping now/);
  } finally {
    if (wrapper.exitCode === null) wrapper.kill('SIGKILL');
  }
});
