import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, ConfigError } from './config.ts';

test('a URL setting that is no URL (a port that is not a number) stops start-up naming the variable, not its password', () => {
  const refused = (env: Record<string, string>, variable: string) =>
    assert.throws(
      () => loadConfig(env),
      (error: Error) => {
        assert.ok(error instanceof ConfigError, String(error));
        assert.match(error.message, new RegExp(`^${variable}`));
        assert.doesNotMatch(error.message, /s3cret/);
        return true;
      },
    );
  refused({ TERDUT_PUBLIC_URL: 'https://terdut.example.com:https' }, 'TERDUT_PUBLIC_URL');
  refused({ TERDUT_NTFY_URL: 'https://ntfy.example.com:443x' }, 'TERDUT_NTFY_URL');
  refused({ TERDUT_NTFY_URL: 'https://pager:s3cret@ntfy.example.com:443x' }, 'TERDUT_NTFY_URL');
  refused(
    {
      TERDUT_SMTP_URL: 'smtps://pager:s3cret@mail.example.com:smtps',
      TERDUT_SMTP_FROM: 'terdut@example.com',
    },
    'TERDUT_SMTP_URL',
  );
  // The forms the README shows still pass.
  assert.doesNotThrow(() =>
    loadConfig({
      TERDUT_PUBLIC_URL: 'https://terdut.example.com',
      TERDUT_NTFY_URL: 'https://ntfy.example.com',
      TERDUT_SMTP_URL: 'smtps://pager:s3cret@mail.example.com:465',
      TERDUT_SMTP_FROM: 'terdut@example.com',
    }),
  );
});

test('a statement timeout or paging poll interval longer than timers take is refused naming it', () => {
  for (const [variable, env] of [
    ['TERDUT_DB_STATEMENT_TIMEOUT', { TERDUT_DB_STATEMENT_TIMEOUT: '30d', TERDUT_DB_QUERY_TIMEOUT: '30d' }],
    ['TERDUT_PAGING_POLL_INTERVAL', { TERDUT_PAGING_POLL_INTERVAL: '30d' }],
  ] as const) {
    assert.throws(
      () => loadConfig(env),
      (error: Error) =>
        error instanceof ConfigError && error.message === `${variable}="30d" is too long; use at most 24d`,
    );
  }
  assert.doesNotThrow(() =>
    loadConfig({
      TERDUT_DB_STATEMENT_TIMEOUT: '24d',
      TERDUT_DB_QUERY_TIMEOUT: '24d',
      TERDUT_PAGING_POLL_INTERVAL: '24d',
    }),
  );
});

test('a TERDUT_SMTP_FROM that is no email address stops start-up naming it; an address with a name passes', () => {
  for (const from of ['terdut', 'terdut@', 'terdut <terdut>', 'on call@example.com']) {
    assert.throws(
      () => loadConfig({ TERDUT_SMTP_URL: 'smtp://mail.example.com:25', TERDUT_SMTP_FROM: from }),
      (error: Error) =>
        error instanceof ConfigError && error.message.startsWith(`TERDUT_SMTP_FROM="${from}"`),
    );
  }
  for (const from of ['terdut@example.com', 'terdut <pager@example.com>', '"On call" <pager@example.com>']) {
    assert.equal(
      loadConfig({ TERDUT_SMTP_URL: 'smtp://mail.example.com:25', TERDUT_SMTP_FROM: from }).paging.smtp?.from,
      from,
    );
  }
});

test('a setting that means nothing without its main one stops start-up naming both, instead of leaving email paging or OIDC off in silence', () => {
  const refusal = (env: Record<string, string>, message: string) =>
    assert.throws(
      () => loadConfig(env),
      (error: Error) => error instanceof ConfigError && error.message === message,
    );
  refusal(
    { TERDUT_SMTP_FROM: 'terdut@example.com' },
    'TERDUT_SMTP_FROM is set but TERDUT_SMTP_URL is not, so email paging would be off; set TERDUT_SMTP_URL or remove it',
  );
  refusal(
    {
      TERDUT_SMTP_HOST: 'mail.example.com',
      TERDUT_SMTP_FROM: 'terdut@example.com',
      TERDUT_SMTP_PASSWORD_FILE: '/s',
    },
    'TERDUT_SMTP_FROM, TERDUT_SMTP_PASSWORD_FILE are set but TERDUT_SMTP_URL is not, so email paging would be off; ' +
      'set TERDUT_SMTP_URL or remove them',
  );
  refusal(
    {
      TERDUT_PUBLIC_URL: 'https://terdut.example.com',
      TERDUT_OIDC_CLIENT_ID: 'terdut',
      TERDUT_OIDC_ADMIN_GROUPS: 'sre',
    },
    'TERDUT_OIDC_CLIENT_ID, TERDUT_OIDC_ADMIN_GROUPS are set but TERDUT_OIDC_ISSUER_URL is not, so OIDC sign-in would be off; ' +
      'set TERDUT_OIDC_ISSUER_URL or remove them',
  );
  // Blank counts as unset, as for every variable: a chart that renders every
  // variable, empty when unused, still starts.
  assert.doesNotThrow(() =>
    loadConfig({ TERDUT_SMTP_URL: '', TERDUT_SMTP_FROM: ' ', TERDUT_OIDC_CLIENT_ID: '' }),
  );
  assert.equal(loadConfig({}).paging.smtp, undefined);
  assert.equal(loadConfig({}).oidc, undefined);
});
