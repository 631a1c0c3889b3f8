import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../config.ts';
import { loadPagingConfig } from './config.ts';

test('an ntfy URL with a user and password stops start-up, pointing at TERDUT_NTFY_TOKEN and not showing the password', () => {
  // fetch would refuse every publish to it, quoting the password in the error.
  assert.throws(
    () => loadPagingConfig({ TERDUT_NTFY_URL: 'https://pager:s3cret-pass@ntfy.example.com' }),
    (error: unknown) =>
      error instanceof ConfigError &&
      /TERDUT_NTFY_URL must not carry a user or password/.test(error.message) &&
      /TERDUT_NTFY_TOKEN/.test(error.message) &&
      !error.message.includes('s3cret-pass'),
  );
  assert.equal(
    loadPagingConfig({ TERDUT_NTFY_URL: 'https://ntfy.example.com/' }).ntfyUrl,
    'https://ntfy.example.com',
  );
});

test('TERDUT_WEBHOOK_ALLOW_LINK_LOCAL is true or false (default false); anything else stops start-up naming it', () => {
  assert.equal(loadPagingConfig({}).webhookLinkLocalAllowed, false);
  assert.equal(loadPagingConfig({ TERDUT_WEBHOOK_ALLOW_LINK_LOCAL: 'true' }).webhookLinkLocalAllowed, true);
  assert.throws(
    () => loadPagingConfig({ TERDUT_WEBHOOK_ALLOW_LINK_LOCAL: 'yes' }),
    (error: unknown) =>
      error instanceof ConfigError &&
      /TERDUT_WEBHOOK_ALLOW_LINK_LOCAL="yes" must be true or false/.test(error.message),
  );
});
