import { useState } from 'preact/hooks';
import type { ServiceAccount } from '@terdut/client';
import { api, client, type AuditEntry, type Person, type Role } from '../api.ts';
import { Button, ErrorNote, formatTime, Page, useAction, useData, useSession } from '../ui.tsx';
import { ApiKeysPanel } from './keys.tsx';

/** Audit entries per page; Older entries reads the next ones (GET /api/audit?before=). */
const AUDIT_PAGE = 100;

/** Admins: people, roles, first passwords, API keys, service accounts, the audit log. */
export function PeoplePage() {
  const people = useData(() => api.people(), []);
  const accounts = useData(() => client.serviceAccounts.list(), []);
  const audit = useData(() => api.audit(AUDIT_PAGE), []);
  const [olderAudit, setOlderAudit] = useState<{ entries: AuditEntry[]; complete: boolean }>({
    entries: [],
    complete: false,
  });
  const loadOlder = useAction();
  const auditEntries = [...(audit.data ?? []), ...olderAudit.entries];
  const { info } = useSession();
  return (
    <Page title="People and access">
      <h2>People</h2>
      <ErrorNote error={people.error} />
      <NewPerson onCreated={people.reload} />
      <ul class="cards">
        {(people.data ?? []).map((person) => (
          <PersonCard key={person.id} person={person} onChanged={people.reload} />
        ))}
      </ul>

      <h2>Service accounts</h2>
      <ErrorNote error={accounts.error} />
      <NewServiceAccount onCreated={accounts.reload} />
      <ul class="cards">
        {(accounts.data ?? []).map((account) => (
          <ServiceAccountCard key={account.id} account={account} onChanged={accounts.reload} />
        ))}
      </ul>

      <h2>Audit log</h2>
      <ErrorNote error={audit.error} />
      <div class="table-wrap">
        <table class="audit">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Target</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {auditEntries.map((entry) => (
              <tr key={entry.id}>
                <td>{formatTime(entry.created_at, info.time_zone)}</td>
                <td>{entry.actor ?? ''}</td>
                <td>
                  {entry.action}
                  {Object.keys(entry.detail).length > 0 && (
                    <span class="muted"> {JSON.stringify(entry.detail)}</span>
                  )}
                </td>
                <td>{entry.target ?? ''}</td>
                <td>{entry.client_address ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {audit.data !== undefined && audit.data.length === AUDIT_PAGE && !olderAudit.complete && (
        <p>
          <Button
            type="button"
            busy={loadOlder.busy}
            onClick={() =>
              void loadOlder.run(async () => {
                const older = await api.audit(AUDIT_PAGE, auditEntries.at(-1)!.id);
                setOlderAudit({
                  entries: [...olderAudit.entries, ...older],
                  complete: older.length < AUDIT_PAGE,
                });
              })
            }
          >
            Older entries
          </Button>
        </p>
      )}
      {olderAudit.complete && <p class="muted">That is the whole audit log.</p>}
      <ErrorNote error={loadOlder.error} />
    </Page>
  );
}

function NewPerson(props: { onCreated: () => void }) {
  const [username, setUsername] = useState('');
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const action = useAction();
  return (
    <form
      class="inline-form"
      aria-label="Add a person"
      onSubmit={(event) => {
        event.preventDefault();
        void action
          .run(() => api.createPerson(username.trim(), email.trim(), role))
          .then((done) => {
            if (!done) return;
            setUsername('');
            setEmail('');
            props.onCreated();
          });
      }}
    >
      <label class="inline">
        Username
        <input required value={username} onInput={(event) => setUsername(event.currentTarget.value)} />
      </label>
      <label class="inline">
        Email
        <input type="email" required value={email} onInput={(event) => setEmail(event.currentTarget.value)} />
      </label>
      <label class="inline">
        Role
        <select value={role} onChange={(event) => setRole(event.currentTarget.value as Role)}>
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
      </label>
      <Button type="submit" busy={action.busy}>
        Add person
      </Button>
      <ErrorNote error={action.error} />
    </form>
  );
}

function PersonCard(props: { person: Person; onChanged: () => void }) {
  const { person } = props;
  const { me, info } = useSession();
  const [password, setPassword] = useState('');
  const [message, setMessage] = useState<string | undefined>(undefined);
  const action = useAction();
  const other = person.role === 'admin' ? 'member' : 'admin';
  return (
    <li class="card">
      <div class="row-main">
        <strong>{person.username}</strong>
        <span class="badge">{person.role}</span>
        <span class="muted">
          {person.email} · since {formatTime(person.created_at, info.time_zone)}
        </span>
      </div>
      <div class="row-actions">
        <Button
          busy={action.busy}
          onClick={() => void action.run(() => api.setRole(person.id, other)).then(props.onChanged)}
        >
          Make {person.username} {other}
        </Button>
        {person.id !== me.user.id && (
          <Button
            class="danger"
            busy={action.busy}
            onClick={() => {
              if (confirm(`Delete ${person.username}? Their sessions and API keys stop working.`))
                void action.run(() => client.users.delete(person.id)).then(props.onChanged);
            }}
          >
            Delete {person.username}
          </Button>
        )}
      </div>
      <form
        class="inline-form"
        onSubmit={(event) => {
          event.preventDefault();
          setMessage(undefined);
          void action
            .run(() => api.setPassword(person.id, password))
            .then((done) => {
              if (done) {
                setPassword('');
                setMessage(`Password of ${person.username} set.`);
              }
            });
        }}
      >
        <label class="inline">
          First password for {person.username}
          <input
            type="password"
            autoComplete="new-password"
            required
            value={password}
            onInput={(event) => setPassword(event.currentTarget.value)}
          />
        </label>
        <Button type="submit" busy={action.busy}>
          Set password
        </Button>
      </form>
      {message && (
        <p role="status" class="ok">
          {message}
        </p>
      )}
      <ErrorNote error={action.error} />
      <details>
        <summary>API keys of {person.username}</summary>
        <ApiKeysPanel
          owner={person.username}
          list={() => client.users.listApiKeys(person.id)}
          create={(name) => client.users.createApiKey(person.id, name)}
          revoke={(keyId) => client.users.deleteApiKey(person.id, keyId)}
        />
      </details>
    </li>
  );
}

function NewServiceAccount(props: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [key, setKey] = useState<string | undefined>(undefined);
  const action = useAction();
  return (
    <>
      <form
        class="inline-form"
        aria-label="Add a service account"
        onSubmit={(event) => {
          event.preventDefault();
          void action
            .run(async () => {
              const created = await client.serviceAccounts.create(name.trim());
              setKey(created.key.key);
              setName('');
            })
            .then(props.onCreated);
        }}
      >
        <label class="inline">
          Service account name
          <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <Button type="submit" busy={action.busy}>
          Add service account
        </Button>
        <ErrorNote error={action.error} />
      </form>
      {key && (
        <div class="secret" role="status">
          <p>Its first key. Copy it now: it is shown once.</p>
          <code class="key">{key}</code>
          <button type="button" onClick={() => setKey(undefined)}>
            I have copied it
          </button>
        </div>
      )}
    </>
  );
}

function ServiceAccountCard(props: { account: ServiceAccount; onChanged: () => void }) {
  const { account } = props;
  const action = useAction();
  return (
    <li class="card">
      <div class="row-main">
        <strong>{account.name}</strong>
        <span class="badge">{account.scope}</span>
        <button
          class="danger small"
          onClick={() => {
            if (confirm(`Delete the service account ${account.name} and all its keys?`))
              void action.run(() => client.serviceAccounts.delete(account.id)).then(props.onChanged);
          }}
        >
          Delete {account.name}
        </button>
      </div>
      <ErrorNote error={action.error} />
      <details>
        <summary>Keys of {account.name}</summary>
        <ApiKeysPanel
          owner={account.name}
          list={() => client.serviceAccounts.listKeys(account.id)}
          create={(name) => client.serviceAccounts.createKey(account.id, name)}
          revoke={(keyId) => client.serviceAccounts.revokeKey(account.id, keyId)}
        />
      </details>
    </li>
  );
}
