import { readFileSync } from 'node:fs';
import { ConfigError } from '../../config.ts';
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
  if (!/^https?:\/\/[^/]+/.test(ntfyUrl)) {
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
  return {
    ntfyUrl,
    ntfyToken,
    retryBudgetMs: duration('TERDUT_PAGING_RETRY_BUDGET', '10m', 1_000),
    pollIntervalMs: duration('TERDUT_PAGING_POLL_INTERVAL', '1s', 50),
    capabilityTtlMs: duration('TERDUT_PAGING_ACTION_TTL', '24h', 60_000),
  };
}
