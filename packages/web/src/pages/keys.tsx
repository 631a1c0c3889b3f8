import { useState } from 'preact/hooks';
import type { ApiKey } from '@terdut/client';
import { Button, ErrorNote, formatTime, useAction, useData, useSession } from '../ui.tsx';

/** A list of API keys with create (the key shown once, never stored) and revoke. */
export function ApiKeysPanel(props: {
  owner: string;
  list: () => Promise<ApiKey[]>;
  create(name: string): Promise<ApiKey & { key: string }>;
  revoke: (keyId: number) => Promise<void>;
}) {
  const { info } = useSession();
  const keys = useData(props.list, [props.owner]);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<(ApiKey & { key: string }) | undefined>(undefined);
  const action = useAction();
  return (
    <div class="keys">
      <ErrorNote error={keys.error ?? action.error} />
      {created && (
        <div class="secret" role="status">
          <p>
            New key <strong>{created.name}</strong>. Copy it now: it is shown once and cannot be read again.
          </p>
          <code class="key" data-testid="new-key">
            {created.key}
          </code>
          <button type="button" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <ul class="plain">
        {(keys.data ?? []).map((key) => (
          <li key={key.id}>
            <strong>{key.name}</strong>{' '}
            <span class="muted">
              created {formatTime(key.created_at, info.time_zone)},{' '}
              {key.last_used_at ? `last used ${formatTime(key.last_used_at, info.time_zone)}` : 'never used'}
            </span>{' '}
            <button
              class="quiet small"
              onClick={() => {
                if (
                  confirm(`Revoke the key "${key.name}" of ${props.owner}? Programs using it stop working.`)
                )
                  void action.run(() => props.revoke(key.id)).then(keys.reload);
              }}
            >
              Revoke {key.name}
            </button>
          </li>
        ))}
        {keys.data?.length === 0 && <li class="muted">No API keys.</li>}
      </ul>
      <form
        class="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          void action
            .run(async () => {
              setCreated(await props.create(name.trim()));
              setName('');
            })
            .then(keys.reload);
        }}
      >
        <label class="inline">
          Key name
          <input value={name} required onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <Button type="submit" busy={action.busy}>
          Create API key
        </Button>
      </form>
    </div>
  );
}
