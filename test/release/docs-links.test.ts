/**
 * The README and docs/ link only to files that are in the repository: a
 * clone is all a reader has (the design documents once lived in a sibling
 * folder that no clone contains).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { repoRoot } from '../peers/child-processes.ts';

const pages = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(repoRoot, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.md'))
    .map((name) => join('docs', name)),
];

test('every relative link in the README and docs/ names a file of the repository', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const page of pages) {
    const text = readFileSync(join(repoRoot, page), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!) || target!.startsWith('#')) continue;
      checked += 1;
      const path = resolve(dirname(join(repoRoot, page)), target!.split('#')[0]!);
      if (!path.startsWith(repoRoot + '/') && path !== repoRoot)
        broken.push(`${page}: ${target} leaves the repository`);
      else if (!existsSync(path))
        broken.push(`${page}: ${target} -> ${relative(repoRoot, path)} does not exist`);
    }
  }
  assert.deepEqual(broken, []);
  assert.ok(checked >= 10, `only ${checked} relative links found: is the pattern still right?`);
});
