import { readFileSync } from 'node:fs';
import { ConfigError, MAX_TIMER_MS, refuseDependentsWithout } from '../../config.ts';
import { parseDuration } from '../../duration.ts';

/** Paging's part of the configuration (README, "Paging"). */
export interface PagingConfig {
  /** Base URL of the ntfy server; messages are published to it as JSON. */
  ntfyUrl: string;
  /** ntfy access token (sent as `Authorization: Bearer`), if any. */
  ntfyToken: string | undefined;
  /** How long one message is retried before it counts as failed and the escalation moves on. */
  retryBudgetMs: number;
  /** How often each replica looks for due escalation steps and messages. */
  pollIntervalMs: number;
  /** How long an Acknowledge button or link stays good. */
  capabilityTtlMs: number;
  /** More pages than this to one person within a minute are folded into one summary page. */
  stormLimitPerMinute: number;
  /** Email over SMTP; undefined: email contact methods are unavailable. */
  smtp: SmtpConfig | undefined;
  /** Webhooks may go to link-local and cloud metadata addresses (webhook-addresses.ts); off by default. */
  webhookLinkLocalAllowed: boolean;
}

export interface SmtpConfig {
  /** `smtp://` or `smtps://user:pass@host:port`. */
  url: string;
  /** The From address of every message. */
  from: string;
  /** From TERDUT_SMTP_PASSWORD_FILE; replaces the URL's password. */
  password: string | undefined;
}

/** Reads the TERDUT_NTFY_* and TERDUT_PAGING_* variables; throws ConfigError naming the bad one. */
export function loadPagingConfig(env: NodeJS.ProcessEnv): PagingConfig {
  const text = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const duration = (name: string, fallback: string, minimumMs: number): number => {
    const raw = text(name) ?? fallback;
    const ms = parseDuration(raw, { allowDays: true });
    if (ms === undefined || ms < minimumMs) {
      throw new ConfigError(
        `${name}="${raw}" is not a duration of at least ${minimumMs} ms; use forms like 500ms, 30s, 10m`,
      );
    }
    return ms;
  };

  const ntfyUrl = (text('TERDUT_NTFY_URL') ?? 'https://ntfy.sh').replace(/\/+$/, '');
  // fetch refuses a URL with credentials, and its error quotes the URL: every
  // page would fail, password and all on the incident's timeline. Checked
  // first: the format's message below quotes the value.
  if (/^[^/]*\/\/[^/?#]*@/.test(ntfyUrl)) {
    throw new ConfigError(
      'TERDUT_NTFY_URL must not carry a user or password; give ntfy an access token in TERDUT_NTFY_TOKEN ' +
        '(or TERDUT_NTFY_TOKEN_FILE) instead',
    );
  }
  // canParse too: a URL the pattern lets through (a port that is no number) failed every page, or start-up.
  if (!(/^https?:\/\/[^/]+/.test(ntfyUrl) && URL.canParse(ntfyUrl))) {
    throw new ConfigError(
      `TERDUT_NTFY_URL="${ntfyUrl}" must be an http(s) URL such as https://ntfy.example.com`,
    );
  }
  let ntfyToken = text('TERDUT_NTFY_TOKEN');
  const tokenFile = text('TERDUT_NTFY_TOKEN_FILE');
  if (tokenFile !== undefined) {
    if (ntfyToken !== undefined)
      throw new ConfigError('set only one of TERDUT_NTFY_TOKEN and TERDUT_NTFY_TOKEN_FILE');
    try {
      ntfyToken = readFileSync(tokenFile, 'utf8').trim();
    } catch (error) {
      throw new ConfigError(
        `TERDUT_NTFY_TOKEN_FILE="${tokenFile}" cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); ` +
          'point it at a readable file holding the ntfy access token',
      );
    }
    if (ntfyToken === '') throw new ConfigError(`TERDUT_NTFY_TOKEN_FILE="${tokenFile}" is empty`);
  }
  let smtp: SmtpConfig | undefined;
  const smtpUrl = text('TERDUT_SMTP_URL');
  refuseDependentsWithout(
    'TERDUT_SMTP_URL',
    ['TERDUT_SMTP_FROM', 'TERDUT_SMTP_PASSWORD_FILE'],
    (name) => text(name) !== undefined,
    'email paging',
  );
  if (smtpUrl !== undefined) {
    if (!(/^smtps?:\/\/[^/]+/.test(smtpUrl) && URL.canParse(smtpUrl))) {
      throw new ConfigError(
        'TERDUT_SMTP_URL must be an smtp:// or smtps:// URL such as smtps://user:pass@mail.example.com:465',
      );
    }
    const from = text('TERDUT_SMTP_FROM');
    if (from === undefined) {
      throw new ConfigError(
        'TERDUT_SMTP_FROM is required with TERDUT_SMTP_URL; set it to an address like terdut@example.com',
      );
    }
    // Checked now: mail servers refuse a sender that is no address (501, 553)
    // as a permanent failure, so every email page failed, each one at its hour.
    if (!/^(?:[^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/.test(from)) {
      throw new ConfigError(
        `TERDUT_SMTP_FROM="${from}" is not an email address; use terdut@example.com or "terdut <terdut@example.com>"`,
      );
    }
    const passwordFile = text('TERDUT_SMTP_PASSWORD_FILE');
    let password: string | undefined;
    if (passwordFile !== undefined) {
      try {
        password = readFileSync(passwordFile, 'utf8').trim();
      } catch (error) {
        throw new ConfigError(
          `TERDUT_SMTP_PASSWORD_FILE="${passwordFile}" cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); ` +
            'point it at a readable file holding the SMTP password',
        );
      }
    }
    smtp = { url: smtpUrl, from, password };
  }
  const stormText = text('TERDUT_PAGING_STORM_LIMIT') ?? '10';
  const stormLimitPerMinute = Number(stormText);
  if (!Number.isInteger(stormLimitPerMinute) || stormLimitPerMinute < 1) {
    throw new ConfigError(
      `TERDUT_PAGING_STORM_LIMIT="${stormText}" is not a whole number of at least 1 (pages per person per minute)`,
    );
  }
  // A longer delay overflows Node's timer, which then fires after 1 ms: the
  // worker polled the database without pause.
  const pollIntervalMs = duration('TERDUT_PAGING_POLL_INTERVAL', '1s', 50);
  if (pollIntervalMs > MAX_TIMER_MS) {
    throw new ConfigError(
      `TERDUT_PAGING_POLL_INTERVAL="${text('TERDUT_PAGING_POLL_INTERVAL')}" is too long; use at most 24d`,
    );
  }
  const linkLocalText = text('TERDUT_WEBHOOK_ALLOW_LINK_LOCAL') ?? 'false';
  if (linkLocalText !== 'true' && linkLocalText !== 'false') {
    throw new ConfigError(`TERDUT_WEBHOOK_ALLOW_LINK_LOCAL="${linkLocalText}" must be true or false`);
  }
  return {
    stormLimitPerMinute,
    smtp,
    webhookLinkLocalAllowed: linkLocalText === 'true',
    ntfyUrl,
    ntfyToken,
    retryBudgetMs: duration('TERDUT_PAGING_RETRY_BUDGET', '10m', 1_000),
    pollIntervalMs,
    capabilityTtlMs: duration('TERDUT_PAGING_ACTION_TTL', '24h', 60_000),
  };
}
