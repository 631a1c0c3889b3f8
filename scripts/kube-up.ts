/**
 * `npm run kube:up`: starts the same etcd + kube-apiserver the tests use, with
 * the third-party CRDs, detached from this shell so it keeps running for
 * trying the operator by hand. State lives in `.terdut-kube/` (git-ignored);
 * `npm run kube:down` stops it.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive, repoRoot } from '../test/peers/child-processes.ts';
import { installThirdPartyCrds } from '../test/peers/crds.ts';
import { startKubeControlPlane } from '../test/peers/kube.ts';
import { buildPeers } from '../test/peers/peers-for-tests.ts';
import { shellQuote } from '../packages/server/src/cli/shell-quote.ts';

const dir = join(repoRoot, '.terdut-kube');
const pidsFile = join(dir, 'pids');
const kubeconfigPath = join(dir, 'kubeconfig');

if (existsSync(pidsFile)) {
  const pids = readFileSync(pidsFile, 'utf8').split(/\s+/).filter(Boolean).map(Number);
  if (pids.length > 0 && pids.every(isProcessAlive)) {
    console.log(`The control plane is already running (pids ${pids.join(' ')}).`);
    console.log(`kubeconfig: ${kubeconfigPath}\n  export KUBECONFIG=${shellQuote(kubeconfigPath)}`);
    process.exit(0);
  }
  console.error(`A stale ${pidsFile} was found; run npm run kube:down first to clean up.`);
  process.exit(1);
}

buildPeers();
const started = performance.now();
const kube = await startKubeControlPlane({ dir, detached: true });
writeFileSync(pidsFile, `${kube.pids.join('\n')}\n`);
try {
  const crds = await installThirdPartyCrds(kube.admin);
  console.log(`Installed CRDs: ${crds.join(', ')}`);
} catch (error) {
  console.error(`Installing the third-party CRDs failed: ${(error as Error).message}`);
}
console.log(
  `kube-apiserver ${kube.server} is ready after ${Math.round(performance.now() - started)} ms (logs in ${dir}).`,
);
console.log(`kubeconfig: ${kube.kubeconfigPath}\n  export KUBECONFIG=${shellQuote(kube.kubeconfigPath)}`);
console.log('Stop it with: npm run kube:down');
