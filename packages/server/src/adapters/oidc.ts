/**
 * The OpenID Connect relying party, behind a small interface: the only file
 * that imports openid-client (a certified implementation), so services never
 * touch the library and its errors arrive here already translated.
 */
import * as client from 'openid-client';

/** What a completed sign-in tells us about the person. */
export interface OidcIdentity {
  issuer: string;
  subject: string;
  email?: string;
  preferredUsername?: string;
  /** Values of the groups claim (empty when the claim is absent). */
  groups: string[];
}

/** The per-sign-in secrets that must come back with the callback (kept in the browser's flow cookie). */
export interface OidcChecks {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** The provider cannot be reached or answered nonsense: a fault on our side of the sign-in (502). */
export class OidcProviderError extends Error {}
/** The sign-in itself was refused or does not check out (the person's side: 400/403). */
export class OidcSignInError extends Error {}

export interface OidcRelyingParty {
  readonly issuer: string;
  /** Where to send the browser, with fresh state, nonce and PKCE verifier. */
  startSignIn(): Promise<{ url: URL; checks: OidcChecks }>;
  /** Validates the callback (state, code exchange with PKCE, ID token, nonce) and reads the claims. */
  finishSignIn(callbackUrl: URL, checks: OidcChecks): Promise<OidcIdentity>;
}

export interface OidcSettings {
  issuerUrl: string;
  clientId: string;
  clientSecret: string | undefined;
  redirectUri: string;
  groupsClaim: string;
  /** Per HTTP request to the provider. */
  timeoutMs?: number;
}

// A failed discovery is retried on the next sign-in, but not more often
// than this, so a dead provider is not hammered by a page reloading.
const DISCOVERY_RETRY_AFTER_MS = 5_000;

/**
 * A relying party that discovers the provider lazily, on the first sign-in:
 * a provider that is down when terdut starts does not stop terdut, and
 * sign-in works as soon as the provider is back.
 */
export function createOidcRelyingParty(settings: OidcSettings): OidcRelyingParty {
  const issuerUrl = new URL(settings.issuerUrl);
  let configuration: Promise<client.Configuration> | undefined;
  let lastFailure: { at: number; error: OidcProviderError } | undefined;

  const discover = (): Promise<client.Configuration> => {
    if (configuration) return configuration;
    if (lastFailure && Date.now() - lastFailure.at < DISCOVERY_RETRY_AFTER_MS) {
      return Promise.reject(lastFailure.error);
    }
    const attempt = client
      .discovery(
        issuerUrl,
        settings.clientId,
        settings.clientSecret,
        settings.clientSecret === undefined ? client.None() : client.ClientSecretPost(settings.clientSecret),
        {
          timeout: (settings.timeoutMs ?? 10_000) / 1000,
          // Plain HTTP only to a provider on this machine (development,
          // tests); anything else must be HTTPS.
          execute: isLoopback(issuerUrl) ? [client.allowInsecureRequests] : [],
        },
      )
      .then((found) => {
        found.timeout = (settings.timeoutMs ?? 10_000) / 1000;
        return found;
      })
      .catch((error: unknown) => {
        configuration = undefined;
        const failure = new OidcProviderError(
          `OIDC discovery at ${settings.issuerUrl} failed (${describe(error)}); check TERDUT_OIDC_ISSUER_URL ` +
            'and that the provider is reachable from the server',
        );
        lastFailure = { at: Date.now(), error: failure };
        throw failure;
      });
    configuration = attempt;
    return attempt;
  };

  return {
    issuer: settings.issuerUrl,

    async startSignIn() {
      const config = await discover();
      const checks: OidcChecks = {
        state: client.randomState(),
        nonce: client.randomNonce(),
        codeVerifier: client.randomPKCECodeVerifier(),
      };
      const offered = config.serverMetadata().scopes_supported ?? [];
      // Ask for the groups scope only where the provider has one (Dex does;
      // others map groups into the token without a scope, and some reject
      // scopes they do not know).
      const scope = ['openid', 'profile', 'email', ...(offered.includes('groups') ? ['groups'] : [])].join(
        ' ',
      );
      const url = client.buildAuthorizationUrl(config, {
        redirect_uri: settings.redirectUri,
        scope,
        state: checks.state,
        nonce: checks.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
      });
      return { url, checks };
    },

    async finishSignIn(callbackUrl, checks) {
      const config = await discover();
      let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
      try {
        tokens = await client.authorizationCodeGrant(config, callbackUrl, {
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          pkceCodeVerifier: checks.codeVerifier,
          idTokenExpected: true,
        });
      } catch (error) {
        throw translate(error, settings.issuerUrl);
      }
      const claims = tokens.claims();
      if (!claims) throw new OidcProviderError('the identity provider returned no ID token');
      let groupsValue: unknown = claims[settings.groupsClaim];
      let email = typeof claims.email === 'string' ? claims.email : undefined;
      let preferredUsername =
        typeof claims.preferred_username === 'string' ? claims.preferred_username : undefined;
      // Providers that keep profile claims out of the ID token (OIDC Core
      // 5.4) serve them from the userinfo endpoint.
      if ((groupsValue === undefined || email === undefined) && config.serverMetadata().userinfo_endpoint) {
        try {
          const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
          groupsValue ??= info[settings.groupsClaim];
          email ??= typeof info.email === 'string' ? info.email : undefined;
          preferredUsername ??=
            typeof info.preferred_username === 'string' ? info.preferred_username : undefined;
        } catch (error) {
          throw translate(error, settings.issuerUrl);
        }
      }
      return {
        issuer: claims.iss,
        subject: claims.sub,
        email,
        preferredUsername,
        groups: readGroups(groupsValue),
      };
    },
  };
}

function readGroups(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

function isLoopback(url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

/** Sorts openid-client's errors into "the provider/config is wrong" and "this sign-in is not valid". */
function translate(error: unknown, issuer: string): Error {
  if (error instanceof client.AuthorizationResponseError) {
    return new OidcSignInError(
      `the identity provider did not sign you in: ${error.error}` +
        (error.error_description ? ` (${error.error_description})` : ''),
    );
  }
  if (error instanceof client.ResponseBodyError) {
    const hint =
      error.error === 'invalid_client' ? '; check TERDUT_OIDC_CLIENT_ID and TERDUT_OIDC_CLIENT_SECRET' : '';
    if (error.error === 'invalid_grant') {
      return new OidcSignInError(
        'the sign-in code was not accepted (already used or expired); please sign in again',
      );
    }
    return new OidcProviderError(`the identity provider refused the token request: ${error.error}${hint}`);
  }
  if (error instanceof client.ClientError) {
    return new OidcSignInError(
      `the sign-in response did not check out (${error.message}); please sign in again`,
    );
  }
  return new OidcProviderError(
    `the identity provider at ${issuer} could not be reached (${describe(error)})`,
  );
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as Error & { cause?: unknown }).cause;
  return cause instanceof Error ? `${error.message}: ${cause.message}` : error.message;
}
