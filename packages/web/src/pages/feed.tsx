import { useState } from 'preact/hooks';
import { Button, ErrorNote, formatTime, useAction } from '../ui.tsx';

/**
 * A secret calendar feed: the server keeps only a hash, so the URL can be
 * shown once, right after it is made; asking again makes a new one and the
 * old URL stops working.
 */
export function CalendarFeedPanel(props: {
  /** What the feed holds, e.g. "the Databases schedule" or "your shifts in every schedule". */
  what: string;
  /** When the feed URL in use was made (the API's `…feed_created_at`); undefined while the feed is off. */
  since: string | undefined;
  /** The zone the rest of the page shows times in (the server's, or the schedule's). */
  zone: string;
  rotate: () => Promise<{ url: string }>;
  remove: () => Promise<void>;
}) {
  const action = useAction();
  const [url, setUrl] = useState<string | undefined>(undefined);
  const [note, setNote] = useState<string | undefined>(undefined);
  // Whether a feed is on: as the page was loaded, then as this panel changed it.
  const [on, setOn] = useState(props.since !== undefined);
  return (
    <div class="feed">
      <p class="muted">
        A calendar feed of {props.what} to subscribe to in Google Calendar, Outlook or Thunderbird (add a
        calendar "from URL"). The URL is the password: a new one makes the previous one stop working.
      </p>
      {url !== undefined && (
        <div class="secret" role="status">
          <p>Copy this URL now: it is shown once and cannot be read again.</p>
          <code class="key" data-testid="feed-url">
            {url}
          </code>
          <button type="button" onClick={() => setUrl(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      {note !== undefined && (
        <p class="ok" role="status">
          {note}
        </p>
      )}
      {on && url === undefined && note === undefined && props.since !== undefined && (
        <p class="muted">
          The feed is on; its URL was made{' '}
          <time dateTime={props.since}>
            {formatTime(props.since, props.zone)} ({props.zone})
          </time>
          .
        </p>
      )}
      <ErrorNote error={action.error} />
      <div class="actions">
        <Button
          type="button"
          busy={action.busy}
          onClick={() => {
            setNote(undefined);
            void action.run(async () => {
              setUrl((await props.rotate()).url);
              setOn(true);
            });
          }}
        >
          Turn on or get a new feed URL
        </Button>
        {/* Only a feed that is on can be turned off. */}
        {on && (
          <Button
            type="button"
            class="danger"
            busy={action.busy}
            onClick={() => {
              setUrl(undefined);
              void action.run(props.remove).then((done) => {
                if (!done) return;
                setOn(false);
                setNote('The feed is off.');
              });
            }}
          >
            Turn the feed off
          </Button>
        )}
      </div>
    </div>
  );
}
