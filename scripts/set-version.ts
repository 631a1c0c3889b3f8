#!/usr/bin/env node
/**
 * Sets terdut's one version everywhere it is written (`npm run version:set -- 0.2.0`):
 * the root and workspace package.json files (and the lockfile, through npm),
 * the Helm chart's version and appVersion, the image tags in deploy/ and the
 * README, and the Dockerfile's default VERSION. The programs read theirs from
 * package.json at run time. test/release/versions.test.ts fails when any of
 * these disagree, so a hand edit that misses one is caught.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(fileURLToPath(import.meta.url), '..', '..');

/** Files that name the version, and how to rewrite each. */
export const versionedFiles: { path: string; pattern: RegExp; replace: (version: string) => string }[] = [
  {
    path: 'deploy/operator/operator.yaml',
    pattern: /(ghcr\.io\/ryuvia\/terdut-(?:operator|server)):[\w.+-]+/g,
    replace: (version) => `$1:${version}`,
  },
  {
    path: 'README.md',
    pattern: /(ghcr\.io\/ryuvia\/terdut-(?:operator|server)):\d[\w.+-]*/g,
    replace: (version) => `$1:${version}`,
  },
  {
    path: 'docs/install/container.md',
    pattern: /(ghcr\.io\/ryuvia\/terdut-(?:operator|server)):\d[\w.+-]*/g,
    replace: (version) => `$1:${version}`,
  },
  {
    path: 'deploy/helm/terdut-operator/Chart.yaml',
    pattern: /^(version: ).*$/m,
    replace: (version) => `$1${version}`,
  },
  {
    path: 'deploy/helm/terdut-operator/Chart.yaml',
    pattern: /^(appVersion: ).*$/m,
    replace: (version) => `$1'${version}'`,
  },
  { path: 'Dockerfile', pattern: /^(ARG VERSION=).*$/gm, replace: (version) => `$1${version}` },
];

function main(version: string | undefined): number {
  if (!version || !/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(version)) {
    process.stderr.write(
      'usage: npm run version:set -- X.Y.Z   (semantic version, e.g. 0.2.0 or 0.2.0-rc.1)\n',
    );
    return 2;
  }
  // The package.json files by hand (npm version would look up the new
  // @terdut/* range on the registry before the workspaces carry it), then
  // the lockfile from them.
  for (const path of [
    'package.json',
    ...readdirSync(join(repoRoot, 'packages')).map((d) => `packages/${d}/package.json`),
  ]) {
    const file = join(repoRoot, path);
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
      version?: string;
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
    pkg.version = version;
    for (const deps of [pkg.dependencies, pkg.devDependencies])
      for (const name of Object.keys(deps ?? {}))
        if (name.startsWith('@terdut/')) deps![name] = `^${version}`;
    writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
  }
  execFileSync('npm', ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  for (const file of versionedFiles) {
    const path = join(repoRoot, file.path);
    writeFileSync(path, readFileSync(path, 'utf8').replace(file.pattern, file.replace(version)));
  }
  process.stdout.write(
    `version ${version} set; add its section to CHANGELOG.md, then run the tests in test/release/\n`,
  );
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv[2]);
