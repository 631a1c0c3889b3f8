import { useState } from 'preact/hooks';
import { api, errorText, type Me, type ServerInfo } from '../api.ts';
import { Button } from '../ui.tsx';

/** Password sign-in, and SSO when the server has OIDC; errors as the server words them. */
export function SignInPage(props: {
  info: ServerInfo;
  onSignedIn(me: Me): void;
  /** Why the person is asked again (their session ended), shown above the form. */
  notice?: string;
}) {
  const [username, setUsername] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  // Only the server's own answers are shown: text from the URL (?error=)
  // would let any link put words of its choosing on this page.

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      props.onSignedIn(await api.signIn(username, password));
    } catch (failure) {
      setError(errorText(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in">
      <h1>Sign in to terdut</h1>
      {props.notice !== undefined && (
        <p class="notice" role="status">
          {props.notice}
        </p>
      )}
      <form onSubmit={(event) => void submit(event)}>
        <label>
          Username
          <input
            name="username"
            autoComplete="username"
            required
            value={username}
            onInput={(event) => setUsername(event.currentTarget.value)}
          />
        </label>
        <label>
          Password
          <input
            name="password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </label>
        {error !== undefined && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <Button type="submit" class="primary" busy={busy}>
          Sign in
        </Button>
      </form>
      {props.info.oidc && (
        <>
          <p class="or">or</p>
          {/* A navigation, not a form post: the provider's pages take over from here. */}
          {/* Back to this page afterwards: a deep link, or the page the session ended on. */}
          <button
            type="button"
            onClick={() =>
              location.assign(
                `/auth/oidc/login?return_to=${encodeURIComponent(location.pathname + location.search)}`,
              )
            }
          >
            Sign in with SSO
          </button>
        </>
      )}
    </main>
  );
}

/** Before the first admin exists: what the bootstrap token is and where to use it. */
export function SetupPage(props: { onReady: () => void }) {
  return (
    <main class="sign-in setup">
      <h1>terdut is not set up yet</h1>
      <p>
        Nobody can sign in until the first admin exists. That admin is created once, with the{' '}
        <strong>bootstrap token</strong>: a secret only whoever runs the server has.
      </p>
      <ul>
        <li>
          <strong>Managed by terdut-operator (Kubernetes):</strong> nothing to do. The operator bootstraps the
          server by itself within a minute and keeps the admin's API key in a Secret; this page then turns
          into the sign-in page.
        </li>
        <li>
          <strong>Installed by hand:</strong> the server printed the token and a ready-to-paste{' '}
          <code>curl … /api/bootstrap</code> command on its standard error when it started (or reads it from{' '}
          <code>TERDUT_BOOTSTRAP_TOKEN</code> / <code>TERDUT_BOOTSTRAP_TOKEN_FILE</code>). Run that command,
          then give the admin a password with <code>PUT /api/users/&#123;id&#125;/password</code>.
        </li>
      </ul>
      <p>The token is never typed into this page: a browser is not where it belongs.</p>
      <button onClick={props.onReady}>Check again</button>
    </main>
  );
}
