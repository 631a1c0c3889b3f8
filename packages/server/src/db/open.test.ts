import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../config.ts';
import { openConfiguredDatabase } from './open.ts';

async function sharedBuffersOfEmbedded(env: Record<string, string>): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'terdut-embedded-'));
  try {
    const { db } = await openConfiguredDatabase(loadConfig({ TERDUT_DATA_DIR: dir, ...env }));
    try {
      const { rows } = await db.query<{ shared_buffers: string }>('SHOW shared_buffers');
      return rows[0]!.shared_buffers;
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('the embedded database keeps 32MB of shared buffers unless TERDUT_EMBEDDED_SHARED_BUFFERS says otherwise', async () => {
  assert.equal(await sharedBuffersOfEmbedded({}), '32MB');
  assert.equal(await sharedBuffersOfEmbedded({ TERDUT_EMBEDDED_SHARED_BUFFERS: '64MB' }), '64MB');
});

test('a TERDUT_EMBEDDED_SHARED_BUFFERS that is not a size stops start-up with a message naming it', () => {
  for (const value of ['lots', '32', '32mb', '0MB', '-1MB', '32MB; DROP']) {
    assert.throws(
      () => loadConfig({ TERDUT_EMBEDDED_SHARED_BUFFERS: value }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.message.includes(`TERDUT_EMBEDDED_SHARED_BUFFERS="${value}" is not a size`),
    );
  }
});
