import { useState } from 'preact/hooks';
import { api, client } from '../api.ts';
import { Button, ErrorNote, Page, useAction, useSession } from '../ui.tsx';
import { ApiKeysPanel } from './keys.tsx';
import { CalendarFeedPanel } from './feed.tsx';
import { ContactMethodsPanel, PagingWarning } from './paging.tsx';

/** My password, how I am paged (topic, contact methods), my calendar feed, my API keys. */
export function MePage() {
  const session = useSession();
  const { user, has_password } = session.me;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [topic, setTopic] = useState(user.ntfy_topic ?? '');
  const password = useAction();
  const notify = useAction();
  const [saved, setSaved] = useState<string | undefined>(undefined);
  return (
    <Page title={`Me: ${user.username}`}>
      <p>
        {user.email} · {user.role}
      </p>
      <h2>Password</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setSaved(undefined);
          void password
            .run(() => api.setPassword(user.id, next, has_password ? current : undefined))
            .then((done) => {
              if (!done) return;
              setCurrent('');
              setNext('');
              setSaved('Password changed.');
              return session.refreshMe();
            });
        }}
      >
        {has_password && (
          <label>
            Current password
            <input
              type="password"
              autoComplete="current-password"
              required
              value={current}
              onInput={(event) => setCurrent(event.currentTarget.value)}
            />
          </label>
        )}
        <label>
          New password
          <input
            type="password"
            autoComplete="new-password"
            required
            value={next}
            onInput={(event) => setNext(event.currentTarget.value)}
          />
        </label>
        <ErrorNote error={password.error} />
        <Button type="submit" busy={password.busy}>
          {has_password ? 'Change password' : 'Set password'}
        </Button>
      </form>
      <PagingWarning />
      <h2>Notifications</h2>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          setSaved(undefined);
          void notify
            .run(() => api.setNotifyTopic(user.id, topic.trim()))
            .then((done) => {
              if (!done) return;
              setSaved(topic.trim() ? 'Notification topic saved.' : 'Notification topic cleared.');
              return session.refreshMe();
            });
        }}
      >
        <label>
          ntfy topic (push notifications while you are on call; empty turns them off)
          <input value={topic} onInput={(event) => setTopic(event.currentTarget.value)} />
        </label>
        <ErrorNote error={notify.error} />
        <Button type="submit" busy={notify.busy}>
          Save topic
        </Button>
      </form>
      <h2>Contact methods</h2>
      <p class="muted">Where terdut pages me when I am on call or named in an escalation step.</p>
      <ContactMethodsPanel userId={user.id} />
      {saved && (
        <p role="status" class="ok">
          {saved}
        </p>
      )}
      <h2>My calendar feed</h2>
      <CalendarFeedPanel
        what="your shifts in every schedule"
        since={session.me.calendar_feed_created_at}
        zone={session.info.time_zone}
        rotate={() => client.schedules.rotatePersonFeed(user.id)}
        remove={() => client.schedules.deletePersonFeed(user.id)}
      />
      <h2>My API keys</h2>
      <p class="muted">For scripts and the terminal client. The browser itself never uses a key.</p>
      <ApiKeysPanel
        owner={user.username}
        list={() => client.users.listApiKeys(user.id)}
        create={(name) => client.users.createApiKey(user.id, name)}
        revoke={(keyId) => client.users.deleteApiKey(user.id, keyId)}
      />
    </Page>
  );
}
