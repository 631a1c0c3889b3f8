/**
 * A real OpenID Provider for tests: the certified `oidc-provider` package,
 * in-process, on a loopback port.
 *
 * It has test people with passwords and groups, one registered confidential
 * client, and its own small login and consent pages (plain HTML forms), so a
 * test drives the same redirects, form posts and cookies a browser would.
 * Passwords are checked (oidc-provider's built-in dev pages accept any
 * password, which would not prove a refused sign-in).
 *
 * @example
 * const idp = await startOidcProvider({ redirectUris: ['http://127.0.0.1:4000/auth/oidc/callback'] });
 * idp.setPerson({ subject: 'ann', username: 'ann', password: 'pw-ann-123456', email: 'ann@example.com', groups: ['oncall'] });
 * // ... TERDUT_OIDC_ISSUER_URL=idp.issuer, CLIENT_ID=idp.clientId, CLIENT_SECRET=idp.clientSecret
 * await idp.stop();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';

/** A person who can sign in at the provider. */
export interface TestPerson {
  /** The stable `sub` claim. */
  subject: string;
  /** What the person types in the login form; also the `preferred_username` claim. */
  username: string;
  password: string;
  email: string;
  groups: string[];
}

export interface RunningOidcProvider {
  /** Issuer identifier, `http://127.0.0.1:<port>` (what TERDUT_OIDC_ISSUER_URL gets). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Adds a person or replaces the one with the same subject (e.g. to change the email). */
  setPerson(person: TestPerson): void;
  stop(): Promise<void>;
}

export interface OidcProviderOptions {
  /** Redirect URIs registered for the client (terdut's `${TERDUT_PUBLIC_URL}/auth/oidc/callback`). */
  redirectUris: string[];
  people?: TestPerson[];
  /**
   * Put the profile, email and groups claims into the ID token (as Dex and a
   * Keycloak mapper do). false: only the userinfo endpoint has them, as
   * OpenID Connect Core 5.4 describes for the code flow.
   */
  claimsInIdToken?: boolean;
}

/** Starts the provider; resolves once it listens. */
export async function startOidcProvider(options: OidcProviderOptions): Promise<RunningOidcProvider> {
  const people = new Map<string, TestPerson>();
  for (const person of options.people ?? []) people.set(person.subject, person);
  const clientId = 'terdut';
  const clientSecret = randomBytes(24).toString('hex');

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-key-1', use: 'sig', alg: 'RS256' };

  const configuration: Configuration = {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: ['openid', 'profile', 'email', 'groups'],
    claims: {
      openid: ['sub'],
      profile: ['preferred_username', 'name'],
      email: ['email', 'email_verified'],
      groups: ['groups'],
    },
    conformIdTokenClaims: !(options.claimsInIdToken ?? true),
    pkce: { required: () => true },
    ttl: {
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 3600,
      Grant: 3600,
      AccessToken: 600,
      IdToken: 600,
    },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: KoaContextWithOIDC, subject: string) => {
      const person = people.get(subject);
      if (!person) return undefined;
      return {
        accountId: subject,
        // Read at token time, so a change made with setPerson shows at the next sign-in.
        claims: () => {
          const current = people.get(subject) ?? person;
          return {
            sub: subject,
            preferred_username: current.username,
            name: current.username,
            email: current.email,
            email_verified: true,
            groups: current.groups,
          };
        },
      };
    },
  };
  const provider = new Provider(issuer, configuration);
  const providerHandler = provider.callback();

  const interactions = async (request: IncomingMessage, response: ServerResponse): Promise<boolean> => {
    const match = /^\/interaction\/([\w-]+)(\/login|\/confirm|\/deny)?$/.exec(
      request.url?.split('?')[0] ?? '',
    );
    if (!match) return false;
    const details = await provider.interactionDetails(request, response);
    const action = match[2];
    if (request.method === 'GET') {
      const page =
        details.prompt.name === 'login'
          ? `<form method="post" action="/interaction/${details.uid}/login">
               <input name="username"><input type="password" name="password"><button>Sign in</button></form>`
          : `<form method="post" action="/interaction/${details.uid}/confirm"><button>Allow</button></form>
             <form method="post" action="/interaction/${details.uid}/deny"><button>Deny</button></form>`;
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(`<!doctype html><title>test provider</title>${page}`);
      return true;
    }
    const form = new URLSearchParams(await readBody(request));
    if (action === '/login') {
      const person = [...people.values()].find((candidate) => candidate.username === form.get('username'));
      if (!person || person.password !== form.get('password')) {
        response.writeHead(401, { 'content-type': 'text/html; charset=utf-8' });
        response.end('<!doctype html><title>test provider</title><p>wrong username or password</p>');
        return true;
      }
      await provider.interactionFinished(
        request,
        response,
        { login: { accountId: person.subject } },
        {
          mergeWithLastSubmission: false,
        },
      );
      return true;
    }
    if (action === '/deny') {
      await provider.interactionFinished(
        request,
        response,
        { error: 'access_denied', error_description: 'the person declined' },
        { mergeWithLastSubmission: false },
      );
      return true;
    }
    // Consent: grant what the client asked for.
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({
          accountId: details.session!.accountId,
          clientId: String(details.params.client_id),
        });
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    if (missing.missingOIDCScope) grant!.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant!.addOIDCClaims(missing.missingOIDCClaims);
    const grantId = await grant!.save();
    await provider.interactionFinished(
      request,
      response,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
    return true;
  };

  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    interactions(request, response).then(
      (handled) => {
        if (!handled) void providerHandler(request, response);
      },
      (error: unknown) => {
        response.writeHead(500, { 'content-type': 'text/plain' });
        response.end(`test provider interaction failed: ${(error as Error).message}`);
      },
    );
  });

  return {
    issuer,
    clientId,
    clientSecret,
    setPerson(person) {
      people.set(person.subject, person);
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}
