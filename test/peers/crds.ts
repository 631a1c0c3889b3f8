/**
 * Third-party CRDs that terdut-operator meets in real clusters -- Gateway API
 * (GatewayClass, Gateway, HTTPRoute, ReferenceGrant; standard channel) and
 * Zalando postgres-operator's `postgresql` -- installed into a test control
 * plane from their projects' own YAML. The files are read from the Go module
 * cache (`go mod download`) at the versions pinned in tools/crds/versions.txt,
 * never written by hand, so a version bump is a one-line change.
 *
 * @example
 *   await installThirdPartyCrds(kube.admin);
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, waitUntil } from './child-processes.ts';
import { kubeRequest, kubeRequestOk, type KubeCredentials } from './kube.ts';

export interface PinnedCrdSource {
  module: string;
  version: string;
  files: string[];
}

const versionsFile = join(repoRoot, 'tools', 'crds', 'versions.txt');

/** The modules, versions and files listed in tools/crds/versions.txt. */
export function pinnedCrdSources(): PinnedCrdSource[] {
  return readFileSync(versionsFile, 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [module, version, ...files] = line.split(/\s+/);
      if (!module || !version || files.length === 0) {
        throw new Error(`${versionsFile}: expected "<module> <version> <file>...", got "${line}"`);
      }
      return { module, version, files };
    });
}

function goCommand(): string {
  if (process.env.GO) return process.env.GO;
  return existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
}

/**
 * The module's directory in the Go module cache, downloading it (a few
 * hundred KB, once per machine) when it is not there yet.
 */
export function moduleDir(module: string, version: string): string {
  let output: string;
  try {
    output = execFileSync(goCommand(), ['mod', 'download', '-json', `${module}@${version}`], {
      encoding: 'utf8',
      // Outside any module, so no go.mod constrains or is changed by the download.
      cwd: '/',
      env: { ...process.env, GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (error) {
    const stdout = (error as { stdout?: string }).stdout ?? '';
    throw new Error(
      `go mod download ${module}@${version} failed (${(error as Error).message}); it needs Go and the Go module proxy. ${stdout}`,
      { cause: error },
    );
  }
  const info = JSON.parse(output) as { Dir?: string; Error?: string };
  if (!info.Dir)
    throw new Error(`go mod download ${module}@${version}: ${info.Error ?? 'no Dir in its answer'}`);
  return info.Dir;
}

/** Every CustomResourceDefinition document in the pinned files, as YAML text. */
export function pinnedCrdDocuments(): { source: string; yaml: string }[] {
  const documents: { source: string; yaml: string }[] = [];
  for (const { module, version, files } of pinnedCrdSources()) {
    const dir = moduleDir(module, version);
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      for (const yaml of text.split(/^---\s*$/m)) {
        if (/^kind:\s*CustomResourceDefinition\s*$/m.test(yaml))
          documents.push({ source: `${module}@${version}/${file}`, yaml });
      }
    }
  }
  return documents;
}

interface AppliedCrd {
  metadata: { name: string };
  spec: { group: string; names: { plural: string }; versions: { name: string; served: boolean }[] };
}

/**
 * Server-side applies the pinned CRDs (idempotent, so a reused control plane
 * is fine) and waits until each is Established and its resources are served.
 * Returns the CRD names.
 */
export async function installThirdPartyCrds(admin: KubeCredentials): Promise<string[]> {
  const applied: AppliedCrd[] = [];
  for (const { source, yaml } of pinnedCrdDocuments()) {
    const name = topLevelMetadataName(yaml);
    if (!name) throw new Error(`cannot find metadata.name of the CRD in ${source}`);
    applied.push(
      await kubeRequestOk<AppliedCrd>(
        admin,
        'PATCH',
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}?fieldManager=terdut-tests&force=true`,
        { body: yaml, contentType: 'application/apply-patch+yaml', timeoutMs: 60_000 },
      ),
    );
  }
  for (const crd of applied) {
    const version = crd.spec.versions.find((v) => v.served)?.name;
    const path = `/apis/${crd.spec.group}/${version}/${crd.spec.names.plural}`;
    await waitUntil(async () => (await kubeRequest(admin, 'GET', `${path}?limit=1`)).status === 200, {
      timeoutMs: 30_000,
      describe: () => `CRD ${crd.metadata.name} was applied but ${path} is not served after 30 s`,
    });
  }
  return applied.map((crd) => crd.metadata.name);
}

/** `metadata.name` of a YAML object in the block style these projects generate. */
function topLevelMetadataName(yaml: string): string | undefined {
  const lines = yaml.split('\n');
  const start = lines.findIndex((line) => /^metadata:\s*$/.test(line));
  if (start < 0) return undefined;
  for (const line of lines.slice(start + 1)) {
    if (/^\S/.test(line)) return undefined; // left the metadata block
    const match = /^ {2}name:\s*(\S+)\s*$/.exec(line);
    if (match) return match[1];
  }
  return undefined;
}
