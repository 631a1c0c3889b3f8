/**
 * Paging: my contact methods and whether I can be paged, escalation
 * policies, heartbeats and maintenance windows. Everyone reads; admins change
 * policies, heartbeats and windows (the server checks, the page only hides
 * what a member could not do anyway).
 */
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Schedule } from '@terdut/client';
import {
  api,
  client,
  type ContactKind,
  type ContactMethod,
  type ContactMethodTest,
  type EscalationPolicy,
  type EscalationPolicyInput,
  type Heartbeat,
  type Person,
  type PolicyStep,
  type PolicyTarget,
} from '../api.ts';
import { useLive } from '../live.ts';
import { Link, useLocation } from '../router.tsx';
import { Button, ErrorNote, formatTime, Page, useAction, useData, useSession } from '../ui.tsx';
import { wallTimeToIso } from '../zoned-time.ts';

/** Said when the signed-in person's contact methods changed, so the warning about them is read again. */
const CONTACT_METHODS_CHANGED = 'terdut:contact-methods-changed';

/**
 * A warning when nothing can reach me (the server warns, GET /api/paging/me),
 * in a person's words with the way to the form; nothing otherwise. The
 * server's own text is for API clients (it names the route to call).
 */
export function PagingWarning() {
  const readiness = useData(() => api.pagingReadiness(), []);
  useEffect(() => {
    window.addEventListener(CONTACT_METHODS_CHANGED, readiness.reload);
    return () => window.removeEventListener(CONTACT_METHODS_CHANGED, readiness.reload);
  }, [readiness.reload]);
  const { path } = useLocation();
  if (readiness.data?.warning === undefined) return null;
  const words = readiness.data.on_call_now
    ? 'You are on call now but have no working contact method: nobody can page you.'
    : 'You have no working contact method: if you are paged, you will be skipped.';
  return (
    <p class="warning" role="alert">
      {words}{' '}
      {path === '/me' ? (
        'Add a contact method below.'
      ) : (
        <Link href="/me">Add a contact method on the Me page</Link>
      )}
    </p>
  );
}

const KIND_LABEL: Record<ContactKind, string> = {
  ntfy: 'ntfy topic',
  webhook: 'Webhook URL',
  email: 'Email',
};

/**
 * What a contact method is called on the page: its name, or, as the name is optional, what it
 * reaches (the topic, the address, a webhook's host), so a nameless one's buttons still say which
 * method they act on ("Test mia-pager", not "Test").
 */
export function contactMethodLabel(method: Pick<ContactMethod, 'name' | 'kind' | 'target'>): string {
  if (method.name.trim() !== '') return method.name;
  if (method.kind !== 'webhook') return method.target;
  try {
    return `webhook to ${new URL(method.target).host}`;
  } catch {
    return 'webhook';
  }
}

/** My contact methods on the Me page: add, switch on or off, delete, send a test. */
export function ContactMethodsPanel(props: { userId: number }) {
  const methods = useData(() => api.contactMethods(props.userId), [props.userId]);
  const changed = () => {
    methods.reload();
    window.dispatchEvent(new Event(CONTACT_METHODS_CHANGED));
  };
  const [kind, setKind] = useState<ContactKind>('ntfy');
  const [name, setName] = useState('');
  const [target, setTarget] = useState('');
  const [secret, setSecret] = useState('');
  const [created, setCreated] = useState<ContactMethod | undefined>(undefined);
  const action = useAction();
  const targetInput = {
    required: true,
    value: target,
    onInput: (event: { currentTarget: HTMLInputElement }) => setTarget(event.currentTarget.value),
  };
  return (
    <div>
      <ErrorNote error={methods.error} />
      {created?.secret !== undefined && (
        <div class="secret" role="status">
          <p>
            Signing secret of <strong>{contactMethodLabel(created)}</strong> (X-Terdut-Signature). Copy it
            now: it is shown once.
          </p>
          <code class="key">{created.secret}</code>
          <button type="button" onClick={() => setCreated(undefined)}>
            I have copied it
          </button>
        </div>
      )}
      <ul class="cards" aria-label="My contact methods">
        {(methods.data ?? []).map((method) => (
          <ContactMethodCard key={method.id} method={method} userId={props.userId} onChanged={changed} />
        ))}
        {methods.data?.length === 0 && <li class="muted">No contact methods yet.</li>}
      </ul>
      <form
        class="inline-form"
        aria-label="Add a contact method"
        onSubmit={(event) => {
          event.preventDefault();
          void action
            .run(async () => {
              const method = await api.createContactMethod(props.userId, {
                kind,
                target: target.trim(),
                ...(name.trim() ? { name: name.trim() } : {}),
                ...(kind === 'webhook' && secret ? { secret } : {}),
              });
              setCreated(method);
              setName('');
              setTarget('');
              setSecret('');
            })
            .then(changed);
        }}
      >
        <label class="inline">
          Kind
          <select value={kind} onChange={(event) => setKind(event.currentTarget.value as ContactKind)}>
            <option value="ntfy">ntfy</option>
            <option value="webhook">webhook</option>
            <option value="email">email</option>
          </select>
        </label>
        <label class="inline grow">
          {KIND_LABEL[kind]}
          {/* Each kind its own input type, so phones offer the right keyboard and the browser checks the form. */}
          {kind === 'email' ? (
            <input type="email" {...targetInput} />
          ) : kind === 'webhook' ? (
            <input type="url" {...targetInput} />
          ) : (
            <input type="text" {...targetInput} />
          )}
        </label>
        {kind === 'webhook' && (
          <label class="inline grow">
            Signing secret (optional, 16+ characters)
            <input
              type="password"
              autoComplete="off"
              minLength={16}
              value={secret}
              onInput={(event) => setSecret(event.currentTarget.value)}
            />
          </label>
        )}
        <label class="inline grow">
          Name (optional)
          <input value={name} onInput={(event) => setName(event.currentTarget.value)} />
        </label>
        <Button type="submit" busy={action.busy}>
          Add contact method
        </Button>
        <ErrorNote error={action.error} />
      </form>
    </div>
  );
}

function ContactMethodCard(props: { method: ContactMethod; userId: number; onChanged: () => void }) {
  const { method, userId } = props;
  const label = contactMethodLabel(method);
  const action = useAction();
  const [result, setResult] = useState<ContactMethodTest | undefined>(undefined);
  return (
    <li class="card">
      <div class="row-main">
        {method.name.trim() !== '' && <strong>{method.name}</strong>}
        <span class="badge">{method.kind}</span>
        <span class="muted" style="word-break: break-all">
          {method.target}
        </span>
        {!method.enabled && <span class="badge">off</span>}
      </div>
      <div class="row-actions">
        <Button
          class="small"
          busy={action.busy}
          onClick={() =>
            void action.run(async () => {
              setResult(undefined);
              setResult(await api.testContactMethod(userId, method.id));
            })
          }
        >
          Test {label}
        </Button>
        <Button
          class="small"
          busy={action.busy}
          onClick={() =>
            void action
              .run(() => api.setContactMethodEnabled(userId, method.id, !method.enabled))
              .then(props.onChanged)
          }
        >
          {method.enabled ? 'Switch off' : 'Switch on'} {label}
        </Button>
        <Button
          class="danger small"
          busy={action.busy}
          onClick={() => {
            if (confirm(`Delete the contact method "${label}"? Pages stop going there.`))
              void action.run(() => api.deleteContactMethod(userId, method.id)).then(props.onChanged);
          }}
        >
          Delete {label}
        </Button>
      </div>
      {result && (
        <p role="status" class={result.delivered ? 'ok' : 'error'}>
          {result.delivered ? 'Delivered' : 'Not delivered'}: {result.answer}
        </p>
      )}
      <ErrorNote error={action.error} />
    </li>
  );
}

/* ---------- escalation policies ---------- */

const lines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

/**
 * Whether a step's target is a person who was deleted after the policy named them: GET /api/users
 * lists exactly the people a step may page (live, not service accounts), and a policy was saved
 * while its people were among them. Paging skips such a target and the server refuses to save it
 * again (400), so the editor leaves it out when saving. False while the people are not known
 * (`people` undefined: loading, or refused), so nobody is called deleted on a guess.
 */
function isDeletedPerson(target: PolicyTarget, people: Person[] | undefined): boolean {
  return (
    people !== undefined && target.type === 'user' && !people.some((person) => person.id === target.user_id)
  );
}

function describeTarget(target: PolicyTarget, people: Person[], schedules: Schedule[]): string {
  if (target.type === 'on_call') {
    if (target.schedule_id === undefined) return 'on call';
    const schedule = schedules.find((one) => one.id === target.schedule_id);
    return `on call in ${schedule?.name ?? `schedule #${target.schedule_id}`}`;
  }
  if (target.type === 'admins') return 'all admins';
  return people.find((person) => person.id === target.user_id)?.username ?? `person #${target.user_id}`;
}

/** A deleted person as the policy pages name them: "person #7 (deleted)", the name struck through. */
function DeletedPerson(props: { userId: number }) {
  return (
    <span title={`person #${props.userId} was deleted: paging skips them`}>
      <s>person #{props.userId}</s> (deleted)
    </span>
  );
}

/** A step's targets on a policy's card, a deleted person marked as such. */
function StepTargets(props: {
  targets: PolicyTarget[];
  people: Person[] | undefined;
  schedules: Schedule[];
}) {
  return (
    <>
      {props.targets.map((target, index) => (
        <Fragment key={index}>
          {index > 0 && ', '}
          {target.type === 'user' && isDeletedPerson(target, props.people) ? (
            <DeletedPerson userId={target.user_id} />
          ) : (
            describeTarget(target, props.people ?? [], props.schedules)
          )}
        </Fragment>
      ))}
    </>
  );
}

export function EscalationPoliciesPage() {
  const { me } = useSession();
  const admin = me.user.role === 'admin';
  const policies = useData(() => api.escalationPolicies(), []);
  const people = useData(() => api.people(), []);
  const schedules = useData(() => client.schedules.list(), []);
  const [editing, setEditing] = useState<EscalationPolicy | 'new' | undefined>(undefined);
  const action = useAction();
  const allSchedules = schedules.data ?? [];
  return (
    <Page
      title="Escalation policies"
      actions={
        admin &&
        editing === undefined && <button onClick={() => setEditing('new')}>New escalation policy</button>
      }
    >
      <p class="muted">
        The first policy whose matchers all match an incident pages; else the default policy; else whoever is
        on call.
      </p>
      <ErrorNote error={policies.error ?? action.error} />
      {editing !== undefined && (
        <PolicyEditor
          policy={editing === 'new' ? undefined : editing}
          people={people.data}
          schedules={allSchedules}
          onDone={() => {
            setEditing(undefined);
            policies.reload();
          }}
        />
      )}
      <ul class="cards" aria-label="Escalation policies">
        {(policies.data ?? []).map((policy) => (
          <li class="card" key={policy.id}>
            <div class="row-main">
              <strong>{policy.name}</strong>
              {policy.default && <span class="badge">default</span>}
              {/* By position: the same matcher may be listed twice, and a key must be unique. */}
              {policy.matchers.map((matcher, index) => (
                <code key={index} class="label">
                  {matcher}
                </code>
              ))}
            </div>
            <ol>
              {policy.steps.map((step, index) => (
                <li key={index}>
                  after {step.delay}:{' '}
                  <StepTargets targets={step.targets} people={people.data} schedules={allSchedules} />
                </li>
              ))}
            </ol>
            <p class="muted">
              {policy.repeat > 0 ? `Repeats ${policy.repeat}× after ${policy.repeat_delay}` : 'No repeats'} ·{' '}
              {policy.notify_on_resolve ? 'tells everyone paged when resolved' : 'silent on resolve'}
            </p>
            {admin && (
              <div class="row-actions">
                <button class="small" onClick={() => setEditing(policy)}>
                  Edit {policy.name}
                </button>
                <button
                  class="danger small"
                  onClick={() => {
                    if (confirm(`Delete the escalation policy "${policy.name}"?`))
                      void action.run(() => api.deleteEscalationPolicy(policy.id)).then(policies.reload);
                  }}
                >
                  Delete {policy.name}
                </button>
              </div>
            )}
          </li>
        ))}
        {policies.data?.length === 0 && (
          <li class="muted">No escalation policies: whoever is on call is paged.</li>
        )}
      </ul>
    </Page>
  );
}

/**
 * A refusal that names one of the policy editor's fields (`field "steps.2.delay" must be …`), said
 * in the editor's words (`Step 3 delay must be …`) and keyed by the field it goes beside; undefined
 * for any other refusal. The server counts steps and matchers from 0 and skips blank matcher lines;
 * the screen counts steps from 1 and the textarea's lines as they stand.
 */
export function policyFieldError(
  message: string,
  matcherText: string,
): { field: string; text: string } | undefined {
  const match =
    /^field "(name|matchers|steps|repeat|repeat_delay)(?:\.(\d+))?(?:\.(delay|targets))?[^"]*"(.*)$/s.exec(
      message,
    );
  if (!match) return undefined;
  const [, top, index, part, rest] = match as unknown as [
    string,
    string,
    string | undefined,
    string | undefined,
    string,
  ];
  const at = index === undefined ? undefined : Number(index);
  if (top === 'name') return { field: 'name', text: `Policy name${rest}` };
  if (top === 'repeat') return { field: 'repeat', text: `Repeat count${rest}` };
  if (top === 'repeat_delay') return { field: 'repeat_delay', text: `Repeat delay${rest}` };
  if (top === 'matchers') {
    if (at === undefined) return { field: 'matchers', text: `Label matchers${rest}` };
    const written = matcherText.split('\n').map((line, number) => ({ line, number }));
    const line = written.filter(({ line }) => line.trim() !== '')[at]?.number;
    return {
      field: 'matchers',
      text:
        line === undefined ? `Label matcher ${at + 1}${rest}` : `Label matcher on line ${line + 1}${rest}`,
    };
  }
  if (at === undefined || part === undefined) return undefined;
  return {
    field: `steps.${at}.${part}`,
    text: `Step ${at + 1} ${part === 'delay' ? 'delay' : 'targets'}${rest}`,
  };
}

/** The id of a policy editor field's input (one editor is open at a time). */
const policyFieldId = (field: string) => `policy-${field.replaceAll('.', '-')}`;

/** A refusal beside the field it is about; the field points at it (aria-describedby). */
function FieldError(props: { field: string; error: { field: string; text: string } | undefined }) {
  if (props.error?.field !== props.field) return null;
  return (
    <p class="error" role="alert" id={`${policyFieldId(props.field)}-error`}>
      {props.error.text}
    </p>
  );
}

/**
 * A step as the editor holds it: with the schedule its "on call" target pages
 * (absent: the default one), kept while "on call" is unticked, so ticking it
 * again pages the same schedule; and the people it named when the editor
 * opened, so a deleted one keeps its (unticked) box once the admin unticks it.
 * Only `delay` and `targets` are saved.
 */
type EditorStep = PolicyStep & { onCallSchedule?: number; namedPeople?: number[] };

function editorStep(step: PolicyStep): EditorStep {
  const onCall = step.targets.find((one) => one.type === 'on_call');
  const namedPeople = step.targets.flatMap((one) => (one.type === 'user' ? [one.user_id] : []));
  return {
    ...step,
    ...(onCall?.schedule_id === undefined ? {} : { onCallSchedule: onCall.schedule_id }),
    ...(namedPeople.length > 0 ? { namedPeople } : {}),
  };
}

/** The deleted people a step names, or named when the editor opened: each keeps a box in the step. */
function deletedPeopleOf(step: EditorStep, people: Person[] | undefined): number[] {
  const named = [
    ...(step.namedPeople ?? []),
    ...step.targets.flatMap((one) => (one.type === 'user' ? [one.user_id] : [])),
  ];
  return [...new Set(named)].filter((userId) => isDeletedPerson({ type: 'user', user_id: userId }, people));
}

const namesPerson = (step: PolicyStep, userId: number) =>
  step.targets.some((one) => one.type === 'user' && one.user_id === userId);
const deletedNoteId = (index: number, userId: number) => policyFieldId(`steps.${index}.deleted.${userId}`);
const pagesNobodyId = (index: number) => policyFieldId(`steps.${index}.nobody`);

/**
 * Whether saving leaves a step with no target: all it names are deleted people (left out when
 * saving), so the server would refuse it (`must name at least one target`).
 */
function pagesNobodyOnSave(step: PolicyStep, people: Person[] | undefined): boolean {
  return step.targets.length > 0 && step.targets.every((target) => isDeletedPerson(target, people));
}

/** A step's deleted people, each a box like any other target's, described by its note below. */
function DeletedPeopleBoxes(props: {
  step: EditorStep;
  index: number;
  people: Person[] | undefined;
  onToggle: (index: number, target: PolicyTarget, on: boolean) => void;
}) {
  const { step, index } = props;
  const nobody = pagesNobodyOnSave(step, props.people);
  return (
    <>
      {deletedPeopleOf(step, props.people).map((userId) => (
        <label class="inline" key={`deleted-${userId}`}>
          <input
            type="checkbox"
            checked={namesPerson(step, userId)}
            aria-describedby={
              nobody
                ? `${deletedNoteId(index, userId)} ${pagesNobodyId(index)}`
                : deletedNoteId(index, userId)
            }
            onChange={(event) =>
              props.onToggle(index, { type: 'user', user_id: userId }, event.currentTarget.checked)
            }
          />
          Step {index + 1}: <DeletedPerson userId={userId} />
        </label>
      ))}
    </>
  );
}

/**
 * Beside a step, before saving: what saving does to its deleted people (leaves them out), and that
 * the step then pages nobody when they were all it named.
 */
function DeletedPeopleNotes(props: { step: EditorStep; index: number; people: Person[] | undefined }) {
  const { step, index } = props;
  return (
    <>
      {deletedPeopleOf(step, props.people).map((userId) => (
        <p class="hint" key={userId} id={deletedNoteId(index, userId)}>
          {namesPerson(step, userId)
            ? `person #${userId} was deleted and will be removed from this step when you save.`
            : `person #${userId} was deleted; this step no longer names them.`}
        </p>
      ))}
      {pagesNobodyOnSave(step, props.people) && (
        <p class="hint" id={pagesNobodyId(index)}>
          Step {index + 1} then pages nobody: tick another target or remove the step.
        </p>
      )}
    </>
  );
}

/** The "on call" target of a step that pages `onCallSchedule` (the default schedule when absent). */
function onCallTarget(step: Pick<EditorStep, 'onCallSchedule'>): PolicyTarget {
  return step.onCallSchedule === undefined
    ? { type: 'on_call' }
    : { type: 'on_call', schedule_id: step.onCallSchedule };
}

/** The same target: of one type, and for a person the same person (an "on call" is one per step). */
function sameTarget(one: PolicyTarget, other: PolicyTarget): boolean {
  return (
    one.type === other.type &&
    (one.type !== 'user' || (other.type === 'user' && one.user_id === other.user_id))
  );
}

function PolicyEditor(props: {
  policy: EscalationPolicy | undefined;
  /** Undefined while not known: then no person has a box, and none is called deleted. */
  people: Person[] | undefined;
  schedules: Schedule[];
  onDone: () => void;
}) {
  const { policy } = props;
  const [name, setName] = useState(policy?.name ?? '');
  const [matchers, setMatchers] = useState((policy?.matchers ?? []).join('\n'));
  const [steps, setSteps] = useState<EditorStep[]>(() =>
    (policy?.steps ?? [{ delay: '0s', targets: [{ type: 'on_call' }] }]).map(editorStep),
  );
  const [repeat, setRepeat] = useState(String(policy?.repeat ?? 0));
  const [repeatDelay, setRepeatDelay] = useState(policy?.repeat_delay ?? '10m');
  const [notifyOnResolve, setNotifyOnResolve] = useState(policy?.notify_on_resolve ?? true);
  const [isDefault, setIsDefault] = useState(policy?.default ?? false);
  const action = useAction();
  const fieldError = action.error === undefined ? undefined : policyFieldError(action.error, matchers);
  /** What a field carries so a refusal about it is announced with it and it reads as invalid. */
  const invalidIf = (field: string) =>
    fieldError?.field === field
      ? { 'aria-invalid': true as const, 'aria-describedby': `${policyFieldId(field)}-error` }
      : {};
  // A refused save puts the keyboard on the field the refusal names: the field may be far above
  // the Save button, where the focus stayed.
  useEffect(() => {
    if (fieldError === undefined) return;
    const element = document.getElementById(policyFieldId(fieldError.field));
    (element instanceof HTMLInputElement || element instanceof HTMLTextAreaElement
      ? element
      : element?.querySelector('input')
    )?.focus();
  }, [action.error]);

  const setStep = (index: number, step: EditorStep) =>
    setSteps(steps.map((old, at) => (at === index ? step : old)));
  const has = (step: PolicyStep, target: PolicyTarget) => step.targets.some((one) => sameTarget(one, target));
  const toggle = (index: number, target: PolicyTarget, on: boolean) => {
    const step = steps[index]!;
    const rest = step.targets.filter((one) => !sameTarget(one, target));
    setStep(index, { ...step, targets: on ? [...rest, target] : rest });
  };
  const chooseSchedule = (index: number, value: string) => {
    const { onCallSchedule: _previous, ...step } = steps[index]!;
    const chosen = value === '' ? {} : { onCallSchedule: Number(value) };
    setStep(index, {
      ...step,
      ...chosen,
      targets: step.targets.map((one) => (one.type === 'on_call' ? onCallTarget(chosen) : one)),
    });
  };
  const heading = policy ? `Edit ${policy.name}` : 'New escalation policy';

  return (
    <form
      class="card"
      aria-label={heading}
      onSubmit={(event) => {
        event.preventDefault();
        const input: EscalationPolicyInput = {
          name: name.trim(),
          default: isDefault,
          matchers: lines(matchers),
          // A deleted person cannot be paged and is refused by the server; each step with one said
          // beside it that saving removes them, so saving untouched does not fail.
          steps: steps.map(({ delay, targets }) => ({
            delay,
            targets: targets.filter((target) => !isDeletedPerson(target, props.people)),
          })),
          repeat: Number(repeat),
          repeat_delay: repeatDelay.trim(),
          notify_on_resolve: notifyOnResolve,
        };
        void action
          .run(() =>
            policy ? api.replaceEscalationPolicy(policy.id, input) : api.createEscalationPolicy(input),
          )
          .then((done) => done && props.onDone());
      }}
    >
      <h2>{heading}</h2>
      <label>
        Policy name
        <input
          required
          id={policyFieldId('name')}
          {...invalidIf('name')}
          value={name}
          onInput={(event) => setName(event.currentTarget.value)}
        />
      </label>
      <FieldError field="name" error={fieldError} />
      <label>
        Label matchers, one a line (all must match; none: only as the default)
        <textarea
          rows={2}
          placeholder={'severity=~"critical|high"'}
          id={policyFieldId('matchers')}
          {...invalidIf('matchers')}
          value={matchers}
          onInput={(event) => setMatchers(event.currentTarget.value)}
        />
      </label>
      <FieldError field="matchers" error={fieldError} />
      {steps.map((step, index) => (
        <fieldset key={index}>
          <legend>Step {index + 1}</legend>
          <label>
            Step {index + 1} delay ({index === 0 ? 'after the incident opens' : 'after the previous step'})
            <input
              required
              id={policyFieldId(`steps.${index}.delay`)}
              {...invalidIf(`steps.${index}.delay`)}
              value={step.delay}
              onInput={(event) => setStep(index, { ...step, delay: event.currentTarget.value })}
            />
          </label>
          <FieldError field={`steps.${index}.delay`} error={fieldError} />
          <div
            class="inline-form"
            role="group"
            aria-label={`Step ${index + 1} targets`}
            id={policyFieldId(`steps.${index}.targets`)}
            {...invalidIf(`steps.${index}.targets`)}
          >
            <label class="inline">
              <input
                type="checkbox"
                checked={has(step, { type: 'on_call' })}
                onChange={(event) => toggle(index, onCallTarget(step), event.currentTarget.checked)}
              />
              Step {index + 1}: on call
            </label>
            {has(step, { type: 'on_call' }) && (
              <label class="inline">
                <span class="visually-hidden">Step {index + 1}: whose schedule</span>
                <select
                  value={String(step.onCallSchedule ?? '')}
                  onChange={(event) => chooseSchedule(index, event.currentTarget.value)}
                >
                  <option value="">in the default schedule</option>
                  {props.schedules.map((schedule) => (
                    <option key={schedule.id} value={String(schedule.id)}>
                      in {schedule.name}
                    </option>
                  ))}
                </select>
              </label>
            )}
            <label class="inline">
              <input
                type="checkbox"
                checked={has(step, { type: 'admins' })}
                onChange={(event) => toggle(index, { type: 'admins' }, event.currentTarget.checked)}
              />
              Step {index + 1}: all admins
            </label>
            {(props.people ?? []).map((person) => (
              <label class="inline" key={person.id}>
                <input
                  type="checkbox"
                  checked={has(step, { type: 'user', user_id: person.id })}
                  onChange={(event) =>
                    toggle(index, { type: 'user', user_id: person.id }, event.currentTarget.checked)
                  }
                />
                Step {index + 1}: {person.username}
              </label>
            ))}
            <DeletedPeopleBoxes step={step} index={index} people={props.people} onToggle={toggle} />
          </div>
          <DeletedPeopleNotes step={step} index={index} people={props.people} />
          <FieldError field={`steps.${index}.targets`} error={fieldError} />
          {steps.length > 1 && (
            <button
              type="button"
              class="quiet small"
              onClick={() => setSteps(steps.filter((_, at) => at !== index))}
            >
              Remove step {index + 1}
            </button>
          )}
        </fieldset>
      ))}
      <p>
        <button
          type="button"
          onClick={() => setSteps([...steps, { delay: '5m', targets: [{ type: 'admins' }] }])}
        >
          Add step
        </button>
      </p>
      <div class="inline-form">
        <label class="inline">
          Repeat count
          <input
            type="number"
            min={0}
            max={100}
            style="width: 5rem"
            id={policyFieldId('repeat')}
            {...invalidIf('repeat')}
            value={repeat}
            onInput={(event) => setRepeat(event.currentTarget.value)}
          />
        </label>
        <label class="inline">
          Repeat delay
          <input
            style="width: 6rem"
            id={policyFieldId('repeat_delay')}
            {...invalidIf('repeat_delay')}
            value={repeatDelay}
            onInput={(event) => setRepeatDelay(event.currentTarget.value)}
          />
        </label>
      </div>
      <FieldError field="repeat" error={fieldError} />
      <FieldError field="repeat_delay" error={fieldError} />
      <label class="inline">
        <input
          type="checkbox"
          checked={notifyOnResolve}
          onChange={(event) => setNotifyOnResolve(event.currentTarget.checked)}
        />
        Notify everyone paged when resolved
      </label>
      <label class="inline">
        <input
          type="checkbox"
          checked={isDefault}
          onChange={(event) => setIsDefault(event.currentTarget.checked)}
        />
        Default policy (for incidents no other policy matches)
      </label>
      {fieldError === undefined && <ErrorNote error={action.error} />}
      <div class="row-actions">
        <Button type="submit" class="primary" busy={action.busy}>
          Save policy
        </Button>
        <button type="button" class="quiet" onClick={props.onDone}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/* ---------- heartbeats ---------- */

/** Milliseconds of a Go-style duration as the server writes it (`1h30m`, `45s`); NaN when unreadable. */
export function durationMs(text: string): number {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  let total = 0;
  let rest = text.trim();
  if (rest === '') return NaN;
  while (rest !== '') {
    const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)/.exec(rest);
    if (!match) return NaN;
    total += Number(match[1]) * units[match[2]!]!;
    rest = rest.slice(match[0].length);
  }
  return total;
}

function heartbeatState(heartbeat: Heartbeat, now = Date.now()): 'alive' | 'missed' {
  const due =
    new Date(heartbeat.last_seen_at).getTime() + durationMs(heartbeat.interval) + durationMs(heartbeat.grace);
  return now > due ? 'missed' : 'alive';
}

export function HeartbeatsPage() {
  const { me, info } = useSession();
  const admin = me.user.role === 'admin';
  const heartbeats = useData(() => api.heartbeats(), []);
  // No change is announced for a ping or a miss; the minute's refresh (and every reconnection) reads
  // them again, so a page left open shows a heartbeat missed, not alive as when it opened.
  useLive(() => false, heartbeats.reload);
  const [name, setName] = useState('');
  const [every, setEvery] = useState('5m');
  const [grace, setGrace] = useState('1m');
  const [matchers, setMatchers] = useState('');
  const action = useAction();
  return (
    <Page title="Heartbeats">
      <p class="muted">
        A heartbeat expects a sign of life (a ping to /api/heartbeats/ID/ping, or a matching alert such as
        Watchdog) every interval; when one is missed, an incident opens and pages.
      </p>
      <ErrorNote error={heartbeats.error ?? action.error} />
      <ul class="cards" aria-label="Heartbeats">
        {(heartbeats.data ?? []).map((heartbeat) => {
          const state = heartbeatState(heartbeat);
          return (
            <li class="card" key={heartbeat.id}>
              <div class="row-main">
                <strong>{heartbeat.name}</strong>
                <span class={`badge ${state === 'missed' ? 'sev-critical' : 'status-resolved'}`}>
                  {state}
                </span>
                <span class="muted">
                  every {heartbeat.interval} (+{heartbeat.grace} grace) · last ping{' '}
                  {formatTime(heartbeat.last_seen_at, info.time_zone)}
                </span>
              </div>
              <div class="row-meta">
                <span>ID {heartbeat.id}</span>
                {heartbeat.matchers.map((matcher, index) => (
                  <code key={index} class="label">
                    {matcher}
                  </code>
                ))}
              </div>
              {admin && (
                <div class="row-actions">
                  <button
                    class="danger small"
                    onClick={() => {
                      if (confirm(`Delete the heartbeat "${heartbeat.name}"?`))
                        void action.run(() => api.deleteHeartbeat(heartbeat.id)).then(heartbeats.reload);
                    }}
                  >
                    Delete {heartbeat.name}
                  </button>
                </div>
              )}
            </li>
          );
        })}
        {heartbeats.data?.length === 0 && <li class="muted">No heartbeats.</li>}
      </ul>
      {admin && (
        <form
          class="card"
          aria-label="Add a heartbeat"
          onSubmit={(event) => {
            event.preventDefault();
            void action
              .run(() =>
                api.createHeartbeat({
                  name: name.trim(),
                  interval: every.trim(),
                  ...(grace.trim() ? { grace: grace.trim() } : {}),
                  matchers: lines(matchers),
                }),
              )
              .then((done) => {
                if (!done) return;
                setName('');
                setMatchers('');
                heartbeats.reload();
              });
          }}
        >
          <h2>Add a heartbeat</h2>
          <label>
            Heartbeat name
            <input required value={name} onInput={(event) => setName(event.currentTarget.value)} />
          </label>
          <div class="inline-form">
            <label class="inline">
              Interval
              <input
                required
                style="width: 6rem"
                value={every}
                onInput={(event) => setEvery(event.currentTarget.value)}
              />
            </label>
            <label class="inline">
              Grace
              <input
                style="width: 6rem"
                value={grace}
                onInput={(event) => setGrace(event.currentTarget.value)}
              />
            </label>
          </div>
          <label>
            Alert matchers, one a line (optional)
            <textarea
              rows={2}
              placeholder={'alertname="Watchdog"'}
              value={matchers}
              onInput={(event) => setMatchers(event.currentTarget.value)}
            />
          </label>
          <Button type="submit" busy={action.busy}>
            Add heartbeat
          </Button>
        </form>
      )}
    </Page>
  );
}

/* ---------- maintenance windows ---------- */

export function MaintenancePage() {
  const { me, info } = useSession();
  const admin = me.user.role === 'admin';
  const windows = useData(() => api.maintenanceWindows(), []);
  // Read again every minute: a window starts (upcoming → current) and ends without any change.
  useLive(() => false, windows.reload);
  const [startsAt, setStartsAt] = useState('');
  const [endsAt, setEndsAt] = useState('');
  const [reason, setReason] = useState('');
  const [matchers, setMatchers] = useState('');
  const action = useAction();
  const now = Date.now();
  return (
    <Page title="Maintenance windows">
      <p class="muted">
        During a window, matching incidents still open but page nobody. Times are in {info.time_zone}.
      </p>
      <ErrorNote error={windows.error ?? action.error} />
      <ul class="cards" aria-label="Maintenance windows">
        {(windows.data ?? []).map((win) => {
          const current = new Date(win.starts_at).getTime() <= now;
          return (
            <li class="card" key={win.id}>
              <div class="row-main">
                <strong>{win.reason}</strong>
                <span class={`badge ${current ? 'status-acknowledged' : ''}`}>
                  {current ? 'current' : 'upcoming'}
                </span>
              </div>
              <div class="row-meta">
                <span>
                  {formatTime(win.starts_at, info.time_zone)} – {formatTime(win.ends_at, info.time_zone)}
                </span>
                {win.matchers.length === 0 ? (
                  <span>every incident</span>
                ) : (
                  win.matchers.map((matcher, index) => (
                    <code key={index} class="label">
                      {matcher}
                    </code>
                  ))
                )}
              </div>
              {admin && (
                <div class="row-actions">
                  <button
                    class="danger small"
                    onClick={() => {
                      if (confirm(`Delete the maintenance window "${win.reason}"?`))
                        void action.run(() => api.deleteMaintenanceWindow(win.id)).then(windows.reload);
                    }}
                  >
                    Delete window {win.reason}
                  </button>
                </div>
              )}
            </li>
          );
        })}
        {windows.data?.length === 0 && <li class="muted">No current or upcoming maintenance.</li>}
      </ul>
      {admin && (
        <form
          class="card"
          aria-label="Schedule a maintenance window"
          onSubmit={(event) => {
            event.preventDefault();
            void action
              .run(() =>
                api.createMaintenanceWindow({
                  starts_at: wallTimeToIso(startsAt, info.time_zone),
                  ends_at: wallTimeToIso(endsAt, info.time_zone),
                  reason: reason.trim(),
                  matchers: lines(matchers),
                }),
              )
              .then((done) => {
                if (!done) return;
                setReason('');
                setMatchers('');
                windows.reload();
              });
          }}
        >
          <h2>Schedule a maintenance window</h2>
          <label>
            Reason
            <input required value={reason} onInput={(event) => setReason(event.currentTarget.value)} />
          </label>
          <div class="inline-form">
            <label>
              Starts ({info.time_zone})
              <input
                type="datetime-local"
                required
                value={startsAt}
                onInput={(event) => setStartsAt(event.currentTarget.value)}
              />
            </label>
            <label>
              Ends ({info.time_zone})
              <input
                type="datetime-local"
                required
                value={endsAt}
                onInput={(event) => setEndsAt(event.currentTarget.value)}
              />
            </label>
          </div>
          <label>
            Label matchers, one a line (none: every incident)
            <textarea rows={2} value={matchers} onInput={(event) => setMatchers(event.currentTarget.value)} />
          </label>
          <Button type="submit" busy={action.busy}>
            Schedule window
          </Button>
        </form>
      )}
    </Page>
  );
}
