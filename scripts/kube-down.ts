/**
 * `npm run kube:down`: stops the control plane `npm run kube:up` started and
 * removes `.terdut-kube/` (its etcd data, certificates and kubeconfig).
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive, repoRoot } from '../test/peers/child-processes.ts';

const dir = join(repoRoot, '.terdut-kube');
const pidsFile = join(dir, 'pids');

if (!existsSync(pidsFile)) {
  console.log('No control plane from npm run kube:up is recorded; nothing to stop.');
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

// kube-apiserver was started last; stop it first so it does not log etcd errors.
const pids = readFileSync(pidsFile, 'utf8').split(/\s+/).filter(Boolean).map(Number).reverse();
for (const pid of pids) {
  if (!isProcessAlive(pid) || !isPeerProcess(pid)) continue;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (isProcessAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (isProcessAlive(pid)) process.kill(pid, 'SIGKILL');
}
rmSync(dir, { recursive: true, force: true });
console.log(`Stopped the control plane (pids ${pids.join(' ')}) and removed ${dir}.`);

/** Guards against a pid the kernel has since given to an unrelated process. */
function isPeerProcess(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(join('tools', 'bin'));
  } catch {
    return false;
  }
}
