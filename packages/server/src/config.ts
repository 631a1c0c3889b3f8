import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { parseDuration } from './duration.ts';
import { loadPagingConfig, type PagingConfig } from './services/paging/config.ts';

/** The server's configuration, read from the environment once at start-up. */
export interface Config {
  port: number;
  host: string;
  /** Unset: the embedded PostgreSQL (PGlite) in `dataDir`. */
  databaseUrl: string | undefined;
  dataDir: string;
  /**
   * PostgreSQL's shared_buffers inside the embedded database
   * (TERDUT_EMBEDDED_SHARED_BUFFERS, e.g. "16MB"): WebAssembly memory is
   * taken once and never returned, so this is most of PGlite's resident set.
   */
  embeddedSharedBuffers: string;
  bootstrapToken: string | undefined;
  bootstrapTokenFile: string | undefined;
  /** IANA zone that defines "today" for the schedule and hour/day statistics. */
  timezone: string;
  /** A firing alert not refreshed for this long counts as resolved (`expiry`). */
  alertStaleAfterMs: number;
  /** How long resolved incidents and their alerts are kept. */
  retentionMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Public base URL (https makes session cookies Secure; OIDC redirect derives from it). */
  publicUrl: string | undefined;
  sessionTtlMs: number;
  /** A session ends this long after its sign-in however much it is used (`TERDUT_SESSION_MAX_AGE`). */
  sessionMaxAgeMs: number;
  /**
   * Reverse proxies (addresses, CIDRs, or proxy-addr's `loopback`,
   * `linklocal`, `uniquelocal`) whose X-Forwarded-For / -Proto are believed.
   * Empty: the TCP peer is the client (rate limits per address need this
   * right behind a proxy, or every client shares the proxy's address).
   */
  trustedProxies: string[];
  oidc: OidcConfig | undefined;
  /** Bearer token /metrics requires (TERDUT_METRICS_TOKEN); unset: /metrics is public. */
  metricsToken: string | undefined;
  /** PostgreSQL `statement_timeout` of every pooled connection (TERDUT_DB_STATEMENT_TIMEOUT). */
  dbStatementTimeoutMs: number;
  /**
   * How long the server waits for any answer from PostgreSQL before giving up
   * on a query (TERDUT_DB_QUERY_TIMEOUT): covers a frozen server or network,
   * which statement_timeout (enforced by that server) cannot.
   */
  dbQueryTimeoutMs: number;
  /** Paging: ntfy server, retry budget, worker interval (services/paging/config.ts). */
  paging: PagingConfig;
}

export interface OidcConfig {
  issuerUrl: string;
  clientId: string;
  /** From TERDUT_OIDC_CLIENT_SECRET, or read from TERDUT_OIDC_CLIENT_SECRET_FILE. Unset: a public client (PKCE only). */
  clientSecret: string | undefined;
  clientSecretFile: string | undefined;
  /** `${TERDUT_PUBLIC_URL}/auth/oidc/callback`: register exactly this at the provider. */
  redirectUri: string;
  groupsClaim: string;
  allowedGroups: string[];
  adminGroups: string[];
}

/** A configuration value that cannot be used; the message names the variable and what it expects. */
export class ConfigError extends Error {}

/** The longest timeout PostgreSQL (an int of ms) and Node's timers (a signed 32-bit delay) take, in whole days. */
export const MAX_TIMER_MS = 24 * 86_400_000;

/**
 * Refuses settings that only mean something beside one that is unset: they
 * would be ignored, and the feature (email pages, OIDC sign-in) would be off
 * without a word, which people find out when a page does not arrive.
 * `isSet` answers for a variable as the loader reads it (blank is unset).
 */
export function refuseDependentsWithout(
  main: string,
  dependents: readonly string[],
  isSet: (name: string) => boolean,
  feature: string,
): void {
  if (isSet(main)) return;
  const orphans = dependents.filter(isSet);
  if (orphans.length === 0) return;
  throw new ConfigError(
    `${orphans.join(', ')} ${orphans.length === 1 ? 'is' : 'are'} set but ${main} is not, so ${feature} would be off; ` +
      `set ${main} or remove ${orphans.length === 1 ? 'it' : 'them'}`,
  );
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * Parses and validates the environment. Throws ConfigError naming the first
 * wrong variable, so `main` can exit with a message instead of a stack.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const text = (name: string): string | undefined => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value.trim();
  };
  const duration = (name: string, fallback: string): number => {
    const raw = text(name) ?? fallback;
    const ms = parseDuration(raw, { allowDays: true });
    if (ms === undefined || ms <= 0) {
      throw new ConfigError(`${name}="${raw}" is not a positive duration; use forms like 90s, 30m, 6h, 180d`);
    }
    return ms;
  };
  const list = (name: string): string[] =>
    (text(name) ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);

  const portText = text('PORT') ?? '8080';
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT="${portText}" is not a TCP port; use a whole number from 0 to 65535`);
  }

  const databaseUrl = text('DATABASE_URL');
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(
      'DATABASE_URL must be a postgres:// or postgresql:// URL (unset it to use the embedded database)',
    );
  }

  const timezone = text('TERDUT_TIMEZONE') ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    throw new ConfigError(
      `TERDUT_TIMEZONE="${timezone}" is not an IANA time zone; use a name like Europe/Berlin or UTC`,
    );
  }

  const logLevel = (text('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL="${logLevel}" is not a level; use one of ${LOG_LEVELS.join(', ')}`);
  }

  const publicUrl = text('TERDUT_PUBLIC_URL');
  // canParse too: a URL the pattern lets through (a port that is no number) broke requests later.
  if (publicUrl !== undefined && !(/^https?:\/\/[^/]+/.test(publicUrl) && URL.canParse(publicUrl))) {
    throw new ConfigError(
      `TERDUT_PUBLIC_URL="${publicUrl}" must be an absolute http(s) URL such as https://terdut.example.com`,
    );
  }

  const trustedProxies = list('TERDUT_TRUSTED_PROXIES');
  for (const entry of trustedProxies) {
    const [address = '', bits, ...rest] = entry.split('/');
    const named = ['loopback', 'linklocal', 'uniquelocal'].includes(entry);
    const maxBits = isIP(address) === 6 ? 128 : 32;
    const bitsOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
    if (!named && (isIP(address) === 0 || !bitsOk || rest.length > 0)) {
      throw new ConfigError(
        `TERDUT_TRUSTED_PROXIES entry "${entry}" is not an address or CIDR; use e.g. 10.0.0.0/8,127.0.0.1 or loopback`,
      );
    }
  }

  const bootstrapToken = text('TERDUT_BOOTSTRAP_TOKEN');
  if (bootstrapToken !== undefined && bootstrapToken.length < 32) {
    throw new ConfigError(
      'TERDUT_BOOTSTRAP_TOKEN is too short; use at least 32 characters of randomness (e.g. openssl rand -hex 32)',
    );
  }

  const metricsToken = text('TERDUT_METRICS_TOKEN');
  if (metricsToken !== undefined && metricsToken.length < 16) {
    throw new ConfigError(
      'TERDUT_METRICS_TOKEN is too short; use at least 16 characters of randomness (e.g. openssl rand -hex 16)',
    );
  }

  const dbStatementTimeoutMs = duration('TERDUT_DB_STATEMENT_TIMEOUT', '30s');
  // PostgreSQL takes a statement_timeout of at most 2^31-1 ms; past it every
  // connection failed, reported as a DATABASE_URL that cannot be reached.
  if (dbStatementTimeoutMs > MAX_TIMER_MS) {
    throw new ConfigError(
      `TERDUT_DB_STATEMENT_TIMEOUT="${text('TERDUT_DB_STATEMENT_TIMEOUT')}" is too long; use at most 24d`,
    );
  }
  const embeddedSharedBuffers = text('TERDUT_EMBEDDED_SHARED_BUFFERS') ?? '16MB';
  if (!/^[1-9][0-9]*(kB|MB|GB)$/.test(embeddedSharedBuffers)) {
    throw new ConfigError(
      `TERDUT_EMBEDDED_SHARED_BUFFERS="${embeddedSharedBuffers}" is not a size; use PostgreSQL's units, like 32MB or 1GB`,
    );
  }
  // PostgreSQL's floor (16 buffers of 8kB), and what fits in the embedded
  // database's WebAssembly memory beside the rest (2GB failed to start).
  // Outside these the start-up failed with an error that blamed TERDUT_DATA_DIR.
  const sharedBuffersKb =
    Number.parseInt(embeddedSharedBuffers, 10) *
    { kB: 1, MB: 1024, GB: 1024 * 1024 }[embeddedSharedBuffers.slice(-2)]!;
  if (sharedBuffersKb < 128 || sharedBuffersKb > 1536 * 1024) {
    throw new ConfigError(
      `TERDUT_EMBEDDED_SHARED_BUFFERS="${embeddedSharedBuffers}" is out of range; the embedded database takes from 128kB to 1536MB`,
    );
  }
  const dbQueryTimeoutMs = duration('TERDUT_DB_QUERY_TIMEOUT', '35s');
  if (dbQueryTimeoutMs < dbStatementTimeoutMs) {
    throw new ConfigError(
      `TERDUT_DB_QUERY_TIMEOUT (${dbQueryTimeoutMs} ms) is shorter than TERDUT_DB_STATEMENT_TIMEOUT ` +
        `(${dbStatementTimeoutMs} ms); make it at least as long, so the server's own timeout answers first`,
    );
  }

  const issuerUrl = text('TERDUT_OIDC_ISSUER_URL');
  refuseDependentsWithout(
    'TERDUT_OIDC_ISSUER_URL',
    [
      'TERDUT_OIDC_CLIENT_ID',
      'TERDUT_OIDC_CLIENT_SECRET',
      'TERDUT_OIDC_CLIENT_SECRET_FILE',
      'TERDUT_OIDC_GROUPS_CLAIM',
      'TERDUT_OIDC_ALLOWED_GROUPS',
      'TERDUT_OIDC_ADMIN_GROUPS',
    ],
    (name) => text(name) !== undefined,
    'OIDC sign-in',
  );
  let oidc: OidcConfig | undefined;
  if (issuerUrl !== undefined) {
    const clientId = text('TERDUT_OIDC_CLIENT_ID');
    if (clientId === undefined)
      throw new ConfigError('TERDUT_OIDC_CLIENT_ID is required when TERDUT_OIDC_ISSUER_URL is set');
    if (publicUrl === undefined) {
      throw new ConfigError(
        'TERDUT_PUBLIC_URL is required when OIDC is configured (the redirect URL is derived from it)',
      );
    }
    let issuer: URL;
    try {
      issuer = new URL(issuerUrl);
    } catch {
      throw new ConfigError(
        `TERDUT_OIDC_ISSUER_URL="${issuerUrl}" is not a URL; use the issuer, e.g. https://idp.example.com/realms/main`,
      );
    }
    const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);
    if (issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && loopback)) {
      throw new ConfigError(
        `TERDUT_OIDC_ISSUER_URL="${issuerUrl}" must be an https:// URL (plain http only for a provider on localhost)`,
      );
    }
    const clientSecretFile = text('TERDUT_OIDC_CLIENT_SECRET_FILE');
    let clientSecret = text('TERDUT_OIDC_CLIENT_SECRET');
    if (clientSecretFile !== undefined) {
      if (clientSecret !== undefined) {
        throw new ConfigError('set only one of TERDUT_OIDC_CLIENT_SECRET and TERDUT_OIDC_CLIENT_SECRET_FILE');
      }
      try {
        clientSecret = readFileSync(clientSecretFile, 'utf8').trim();
      } catch (error) {
        throw new ConfigError(
          `TERDUT_OIDC_CLIENT_SECRET_FILE="${clientSecretFile}" cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'}); ` +
            'point it at a readable file holding the client secret',
        );
      }
      if (clientSecret === '')
        throw new ConfigError(`TERDUT_OIDC_CLIENT_SECRET_FILE="${clientSecretFile}" is empty`);
    }
    oidc = {
      issuerUrl,
      clientId,
      clientSecret,
      clientSecretFile,
      redirectUri: `${publicUrl.replace(/\/+$/, '')}/auth/oidc/callback`,
      groupsClaim: text('TERDUT_OIDC_GROUPS_CLAIM') ?? 'groups',
      allowedGroups: list('TERDUT_OIDC_ALLOWED_GROUPS'),
      adminGroups: list('TERDUT_OIDC_ADMIN_GROUPS'),
    };
  }

  return {
    port,
    host: text('HOST') ?? '0.0.0.0',
    databaseUrl,
    dataDir: text('TERDUT_DATA_DIR') ?? './.terdut',
    embeddedSharedBuffers,
    bootstrapToken,
    bootstrapTokenFile: text('TERDUT_BOOTSTRAP_TOKEN_FILE'),
    timezone,
    alertStaleAfterMs: duration('TERDUT_ALERT_STALE_AFTER', '6h'),
    retentionMs: duration('TERDUT_RETENTION', '180d'),
    logLevel: logLevel as Config['logLevel'],
    publicUrl,
    sessionTtlMs: duration('TERDUT_SESSION_TTL', '12h'),
    sessionMaxAgeMs: duration('TERDUT_SESSION_MAX_AGE', '30d'),
    trustedProxies,
    oidc,
    metricsToken,
    dbStatementTimeoutMs,
    dbQueryTimeoutMs,
    paging: loadPagingConfig(env),
  };
}
