/**
 * One version for the three packages, set in one place (`npm run
 * version:set`, which writes package.json and every file below): the
 * programs report it, the operator runs the server image of the same
 * version, and deploy/, the Helm chart, the Dockerfile and the changelog
 * name it. A release that bumps one and forgets another fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../peers/child-processes.ts';
import { DEFAULT_SERVER_IMAGE, VERSION as operatorVersion } from '../../packages/operator/src/version.ts';
import { VERSION as serverVersion } from '../../packages/server/src/version.ts';
import { loadOperatorConfig } from '../../packages/operator/src/config.ts';

const read = (path: string): string => readFileSync(join(repoRoot, path), 'utf8');
const version = (JSON.parse(read('package.json')) as { version: string }).version;

test('the root and every workspace package.json carry the same version', () => {
  assert.match(version, /^\d+\.\d+\.\d+/);
  for (const workspace of ['server', 'operator', 'client'])
    assert.equal(
      (JSON.parse(read(`packages/${workspace}/package.json`)) as { version: string }).version,
      version,
      `packages/${workspace}/package.json`,
    );
  assert.equal(serverVersion, version);
  assert.equal(operatorVersion, version);
});

test('terdut-server --version and terdut-operator --version print it', () => {
  const run = (main: string) =>
    execFileSync(process.execPath, [join(repoRoot, main), '--version'], { encoding: 'utf8' }).trim();
  assert.equal(run('packages/server/src/main.ts'), version);
  assert.equal(run('packages/operator/src/main.ts'), version);
});

test('the operator runs the server image of its own version unless told otherwise', () => {
  assert.equal(DEFAULT_SERVER_IMAGE, `ghcr.io/ryuvia/terdut-server:${version}`);
  assert.equal(loadOperatorConfig([], {}).defaultImage, DEFAULT_SERVER_IMAGE);
});

test('deploy/, the README, the install docs, the Helm chart and the Dockerfile name that version', () => {
  const imageTags = (text: string) =>
    [...text.matchAll(/ghcr\.io\/ryuvia\/terdut-(?:operator|server):([\w.+-]+)/g)].map((m) => m[1]);
  const deployTags = imageTags(read('deploy/operator/operator.yaml'));
  assert.equal(deployTags.length, 2, 'deploy/operator/operator.yaml names the operator and the server image');
  assert.deepEqual(new Set(deployTags), new Set([version]));
  assert.deepEqual(new Set(imageTags(read('README.md'))), new Set([version]));
  assert.deepEqual(new Set(imageTags(read('docs/install/container.md'))), new Set([version]));

  const chart = read('deploy/helm/terdut-operator/Chart.yaml');
  assert.match(chart, new RegExp(`^version: ${version.replaceAll('.', '\\.')}$`, 'm'));
  assert.match(chart, new RegExp(`^appVersion: ["']${version.replaceAll('.', '\\.')}["']$`, 'm'));

  const defaults = [...read('Dockerfile').matchAll(/^ARG VERSION=(.*)$/gm)].map((m) => m[1]);
  assert.equal(defaults.length, 2, 'both image targets declare ARG VERSION');
  assert.deepEqual(new Set(defaults), new Set([version]));
});

test('CHANGELOG.md has a section for that version', () => {
  assert.match(read('CHANGELOG.md'), new RegExp(`^## \\[${version.replaceAll('.', '\\.')}\\]`, 'm'));
});
