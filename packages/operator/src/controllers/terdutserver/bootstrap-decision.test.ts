/**
 * The bootstrap protocol as a table: every row of bootstrap-protocol.md's
 * operator rules, as facts in and the next step out. A row that changes
 * here changes the protocol; the real-cluster tests cover what needs a
 * cluster (crashes, lost answers, the server's own answers).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  nextBootstrapStep,
  readyReason,
  type BootstrapFacts,
  type BootstrapStep,
  type ReadyPath,
} from './bootstrap-decision.ts';

/** A server that is available, never bootstrapped by this operator, token Secret in place. */
const fresh: BootstrapFacts = {
  serverAvailable: true,
  recorded: false,
  credentials: 'absent',
  settled: false,
  checkpoint: 'absent',
  token: true,
  exchange: 'none',
  tokenRotation: 'none',
};

const rows: [string, Partial<BootstrapFacts>, BootstrapStep['do']][] = [
  // Steady state.
  [
    'settled, key not yet checked this pass: verify it',
    { recorded: true, settled: true, credentials: 'unchecked' },
    'verify-credentials',
  ],
  [
    'settled, key works, no checkpoint: nothing to do',
    { recorded: true, settled: true, credentials: 'works' },
    'done',
  ],
  [
    'settled, server not available: keep the state, no request',
    { recorded: true, settled: true, credentials: 'unchecked', serverAvailable: false },
    'done',
  ],
  [
    'settled, key works, a checkpoint reappeared: sweep (an admin key someone may hold)',
    { recorded: true, settled: true, credentials: 'works', checkpoint: 'present' },
    'sweep',
  ],
  // Resuming after a crash.
  [
    'credentials written, status not (crash after the Secret write): sweep',
    { credentials: 'works', checkpoint: 'present' },
    'sweep',
  ],
  [
    'credentials recorded, sweep not finished (crash in the sweep or before the status write): sweep',
    { recorded: true, credentials: 'works', checkpoint: 'present' },
    'sweep',
  ],
  [
    'credentials recorded, checkpoint deleted by hand, not yet settled: sweep',
    { recorded: true, credentials: 'works' },
    'sweep',
  ],
  [
    'credentials present but unchecked, not settled: verify before trusting',
    { credentials: 'unchecked' },
    'verify-credentials',
  ],
  [
    'credentials present, not settled, server not available: wait',
    { credentials: 'unchecked', serverAvailable: false },
    'wait-for-server',
  ],
  [
    'checkpoint present (crash after the checkpoint): mint with it',
    { checkpoint: 'present' },
    'mint-credentials',
  ],
  ['checkpoint refused (revoked, another database): drop it', { checkpoint: 'refused' }, 'drop-checkpoint'],
  // Losing what was recorded.
  [
    'recorded Secret deleted by hand: forget it (event), then recover',
    { recorded: true, settled: true, credentials: 'absent' },
    'forget-credentials',
  ],
  [
    'recorded key refused (revoked by an admin): forget it (event), then recover',
    { recorded: true, settled: true, credentials: 'refused' },
    'forget-credentials',
  ],
  [
    'unrecorded credentials refused: forget them',
    { credentials: 'refused', checkpoint: 'present' },
    'forget-credentials',
  ],
  // Obtaining an admin key.
  ['server not available yet: wait', { serverAvailable: false }, 'wait-for-server'],
  ['fresh server: POST /api/bootstrap', {}, 'bootstrap'],
  [
    'bootstrap answered 403 (already bootstrapped, or our own lost answer): recover',
    { exchange: 'bootstrap-forbidden' },
    'recover',
  ],
  ['token Secret missing: wait for the token step to recreate it', { token: false }, 'wait-for-token-secret'],
  ['token refused (401), not rotated yet: rotate it', { exchange: 'token-refused' }, 'rotate-token'],
  [
    'token refused, rotated recently: wait for the pod to read it',
    { exchange: 'token-refused', tokenRotation: 'waiting' },
    'wait-for-token-pickup',
  ],
  [
    'token refused, rotated long ago: BootstrapStateLost',
    { exchange: 'token-refused', tokenRotation: 'expired' },
    'report-state-lost',
  ],
  [
    'server unavailable with a checkpoint: wait (nothing can be minted)',
    { serverAvailable: false, checkpoint: 'present' },
    'wait-for-server',
  ],
];

for (const [name, facts, expected] of rows) {
  test(`bootstrap decision: ${name}`, () => {
    assert.equal(nextBootstrapStep({ ...fresh, ...facts }).do, expected);
  });
}

test('the reason given for a forgotten credential says which: missing or refused', () => {
  assert.deepEqual(nextBootstrapStep({ ...fresh, recorded: true, credentials: 'absent' }), {
    do: 'forget-credentials',
    because: 'missing',
  });
  assert.deepEqual(nextBootstrapStep({ ...fresh, recorded: true, credentials: 'refused' }), {
    do: 'forget-credentials',
    because: 'refused',
  });
});

/** Every pass of an uninterrupted bootstrap, each decision fed the outcome of the one before. */
test('an uninterrupted bootstrap of a fresh server goes bootstrap → mint → sweep → done', () => {
  const seen: string[] = [];
  let facts: BootstrapFacts = { ...fresh };
  const outcomes: Record<string, Partial<BootstrapFacts>> = {
    bootstrap: { checkpoint: 'present' },
    'mint-credentials': { credentials: 'works', recorded: true },
    sweep: { settled: true, checkpoint: 'absent' },
  };
  for (let i = 0; i < 6; i++) {
    const step = nextBootstrapStep(facts).do;
    seen.push(step);
    if (step === 'done') break;
    facts = { ...facts, ...outcomes[step] };
  }
  assert.deepEqual(seen, ['bootstrap', 'mint-credentials', 'sweep', 'done']);
});

test('an existing database (403) goes bootstrap → recover → mint → sweep', () => {
  const seen: string[] = [];
  let facts: BootstrapFacts = { ...fresh };
  const outcomes: Record<string, Partial<BootstrapFacts>> = {
    bootstrap: { exchange: 'bootstrap-forbidden' },
    recover: { checkpoint: 'present' },
    'mint-credentials': { credentials: 'works', recorded: true },
    sweep: { settled: true, checkpoint: 'absent' },
  };
  for (let i = 0; i < 6; i++) {
    const step = nextBootstrapStep(facts).do;
    seen.push(step);
    if (step === 'done') break;
    facts = { ...facts, ...outcomes[step] };
  }
  assert.deepEqual(seen, ['bootstrap', 'recover', 'mint-credentials', 'sweep', 'done']);
});

test('no row reaches done without a key that works, and none without the sweep having run', () => {
  const values = {
    serverAvailable: [true, false],
    recorded: [true, false],
    credentials: ['absent', 'unchecked', 'works', 'refused'],
    settled: [true, false],
    checkpoint: ['absent', 'present', 'refused'],
    token: [true, false],
    exchange: ['none', 'bootstrap-forbidden', 'token-refused'],
    tokenRotation: ['none', 'waiting', 'expired'],
  } as const;
  let combinations: BootstrapFacts[] = [{ ...fresh }];
  for (const [field, options] of Object.entries(values))
    combinations = combinations.flatMap((facts) => options.map((value) => ({ ...facts, [field]: value })));
  for (const facts of combinations) {
    const step = nextBootstrapStep(facts).do;
    if (step !== 'done') continue;
    assert.ok(facts.settled, `done without a sweep: ${JSON.stringify(facts)}`);
    assert.ok(
      facts.credentials === 'works' || (facts.credentials === 'unchecked' && !facts.serverAvailable),
      `done with credentials ${facts.credentials}: ${JSON.stringify(facts)}`,
    );
    assert.notEqual(facts.checkpoint, 'present', `done with a checkpoint left: ${JSON.stringify(facts)}`);
  }
});

const paths: [Partial<ReadyPath>, string][] = [
  [{ minted: true, adminKeyFrom: 'bootstrap' }, 'BootstrapSucceeded'],
  [{ minted: true, adminKeyFrom: 'recover' }, 'BootstrapRecovered'],
  [{ minted: true, adminKeyFrom: 'checkpoint' }, 'BootstrapResumed'],
  [{ minted: false, adminKeyFrom: 'none' }, 'BootstrapResumed'],
  [{ minted: true, adminKeyFrom: 'recover', replaced: true }, 'CredentialsReissued'],
];

for (const [path, reason] of paths) {
  test(`every path to Ready names how: ${JSON.stringify(path)} → ${reason}`, () => {
    assert.equal(readyReason({ minted: false, adminKeyFrom: 'none', replaced: false, ...path }), reason);
  });
}
