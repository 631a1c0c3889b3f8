/**
 * When the running server refuses the operator's bootstrap token (401), the
 * operator rotates the token Secret and waits for the pod to read it; when
 * even that fails it says BootstrapStateLost with a next step that works.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { KubeletStandIn } from '../peers/kubelet-standin.ts';
import { kubeForTests, uniqueNamespace, type KubeForTests } from '../peers/peers-for-tests.ts';
import { createTestPostgres } from '../support/databases.ts';
import {
  conditionOf,
  createSecret,
  createTerdutServer,
  ensureNamespace,
  getSecret,
  installTerdutCrd,
  operatorNamespace,
  secretValue,
  waitForCondition,
  waitForDeployment,
  waitForEvent,
} from './support/operator.ts';
import { startInProcessOperator, type InProcessOperator } from './support/operator-process.ts';

let kube: KubeForTests;
let standIn: KubeletStandIn;
const operators: InProcessOperator[] = [];
const databases: { drop(): Promise<void> }[] = [];

before(async () => {
  kube = await kubeForTests();
  await installTerdutCrd(kube.admin);
  await ensureNamespace(kube.admin, operatorNamespace);
  standIn = new KubeletStandIn(kube.admin);
});

after(async () => {
  for (const operator of operators) await operator.stop();
  await standIn?.stop();
  for (const database of databases) await database.drop();
  await kube?.stop();
  for (const dir of foreignTokenDirs) rmSync(dir, { recursive: true, force: true });
});

/** A namespace with its own operator, a database Secret and a TerdutServer `name`. */
async function scenario(name: string, tokenPickupTimeoutSeconds: number) {
  const namespace = await uniqueNamespace(kube.admin, `op-${name}`);
  operators.push(
    await startInProcessOperator({
      kubeconfigPath: kube.kubeconfigPath,
      standIn,
      watchNamespaces: [namespace],
      tokenPickupTimeoutSeconds,
    }),
  );
  const database = await createTestPostgres();
  databases.push(database);
  await createSecret(kube.admin, namespace, 'db', { DATABASE_URL: database.url });
  await createTerdutServer(kube.admin, namespace, name, { database: { secretRef: { name: 'db' } } });
  await waitForDeployment(kube.admin, namespace, name);
  return namespace;
}

/** A token file the pod reads instead of the mounted Secret: the operator cannot reach it. */
/** Directories of foreign token files, removed after the tests. */
const foreignTokenDirs: string[] = [];

function foreignTokenFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'terdut-foreign-token-')), 'token');
  foreignTokenDirs.push(dirname(file));
  writeFileSync(file, 'f'.repeat(64));
  return file;
}

test('a server running with a token the operator does not hold: the token is rotated, the pod reads it, the bootstrap completes', async (t) => {
  const namespace = await scenario('mismatch', 120);
  const tokenFile = foreignTokenFile();
  const workload = await standIn.runDeployment(namespace, 'mismatch', {
    env: { TERDUT_BOOTSTRAP_TOKEN_FILE: tokenFile },
  });
  t.after(() => workload.stop());

  const rotated = await waitForEvent(kube.admin, namespace, 'TokenRotated');
  assert.equal(rotated.type, 'Warning');
  assert.match(rotated.note, /answered 401/);
  // Level-triggered status: the pass that rotated the token writes its reason
  // after the event, so wait for it rather than read the first False seen
  // (which may still be the earlier WaitingForServer).
  const waiting = await waitForCondition(kube.admin, namespace, 'mismatch', {
    type: 'Bootstrapped',
    status: 'False',
    reason: /^(TokenRotated|WaitingForTokenPickup)$/,
  });
  assert.match(conditionOf(waiting, 'Bootstrapped').reason, /^(TokenRotated|WaitingForTokenPickup)$/);

  // The kubelet delivers the rotated Secret late: the pod now has the new token.
  const secret = await getSecret(kube.admin, namespace, 'mismatch-bootstrap-token');
  assert.ok(secret.metadata.annotations['terdut.ryuvia.com/token-rotated-at']);
  writeFileSync(tokenFile, secretValue(secret, 'token')!);

  await waitForCondition(kube.admin, namespace, 'mismatch', { type: 'Ready', status: 'True' }, 60_000);
  await waitForEvent(kube.admin, namespace, 'BootstrapSucceeded');
  const after = await getSecret(kube.admin, namespace, 'mismatch-bootstrap-token');
  assert.equal(
    after.metadata.annotations?.['terdut.ryuvia.com/token-rotated-at'],
    undefined,
    'the rotation mark is cleared',
  );
});

test('recovery refused even after rotation: Ready=False BootstrapStateLost naming a step that works, and that step works', async (t) => {
  const namespace = await scenario('lost', 3);
  const workload = await standIn.runDeployment(namespace, 'lost', {
    env: { TERDUT_BOOTSTRAP_TOKEN_FILE: foreignTokenFile() },
  });
  const lost = await waitForCondition(
    kube.admin,
    namespace,
    'lost',
    { type: 'Ready', status: 'False', reason: 'BootstrapStateLost' },
    60_000,
  );
  const message: string = conditionOf(lost, 'Ready').message;
  assert.match(message, /still refuses the bootstrap token/);
  assert.match(message, new RegExp(`kubectl -n ${namespace} rollout restart deployment/lost`));
  assert.match(message, /terdut-server admin recover --username terdut-operator/);
  const event = await waitForEvent(kube.admin, namespace, 'BootstrapStateLost');
  assert.equal(event.type, 'Warning');

  // The named step: restart the pod so it reads the mounted Secret.
  await workload.stop();
  const restarted = await standIn.runDeployment(namespace, 'lost');
  t.after(() => restarted.stop());
  await waitForCondition(kube.admin, namespace, 'lost', { type: 'Ready', status: 'True' }, 60_000);
});
