/**
 * Every workspace declares what it imports, and imports what it declares.
 * A package that resolves only because a sibling's copy is hoisted to the
 * root node_modules works in the checkout and fails in an image built with
 * `npm ci --omit=dev -w <workspace>` (the operator once imported prom-client
 * and typebox that way).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { repoRoot } from '../peers/child-processes.ts';

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const readPackage = (dir: string): PackageJson =>
  JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;

/** A workspace's TypeScript (`.ts`, `.tsx`): its src/ and its build scripts, not node_modules or build output. */
function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.tsx?$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
    .filter(
      (file) =>
        !/[/\\](node_modules|dist)[/\\]/.test(relative(dir, file)) &&
        !/^(node_modules|dist)[/\\]/.test(relative(dir, file)),
    );
}

/** Package names a file imports at run time (`import type` is erased, so it does not count). */
export function importedPackages(source: string): string[] {
  const names = new Set<string>();
  const pattern =
    /^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm;
  for (const match of source.matchAll(pattern)) {
    const specifier = match[1] ?? match[2]!;
    if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) continue;
    const name = specifier.startsWith('@')
      ? specifier.split('/').slice(0, 2).join('/')
      : specifier.split('/')[0]!;
    if (builtinModules.includes(name)) continue;
    names.add(name);
  }
  return [...names];
}

/** Package names a file names in any import, `import type` included (what makes a declaration used). */
function referencedPackages(source: string): string[] {
  const typeOnly = /^\s*(?:import|export)\s+type\s[^'";]*?\sfrom\s+['"]([^'".][^'"]*)['"]/gm;
  const names = [...source.matchAll(typeOnly)].map((match) =>
    match[1]!.startsWith('@') ? match[1]!.split('/').slice(0, 2).join('/') : match[1]!.split('/')[0]!,
  );
  return [...new Set([...importedPackages(source), ...names])];
}

const root = readPackage(repoRoot);
const workspaces = readdirSync(join(repoRoot, 'packages')).map((name) => join(repoRoot, 'packages', name));
/** Every workspace (packages/* and test/support): tests beside the code may import any of them. */
const workspaceNames = new Set(
  [...workspaces, join(repoRoot, 'test', 'support')].map((dir) => readPackage(dir).name),
);

for (const dir of workspaces) {
  const pkg = readPackage(dir);
  test(`${pkg.name} declares every package its code imports, and imports every dependency it declares`, () => {
    const declared = new Set(Object.keys(pkg.dependencies ?? {}));
    const usedByCode = new Set<string>();
    const problems: string[] = [];
    for (const file of typeScriptFiles(dir)) {
      const isTest = file.endsWith('.test.ts');
      // A package's build script (its build.ts) runs where the dev dependencies are, never in the image.
      const isBuildScript = relative(dir, file) === 'build.ts';
      const source = readFileSync(file, 'utf8');
      if (!isTest) for (const name of referencedPackages(source)) usedByCode.add(name);
      for (const name of importedPackages(source)) {
        if (name === pkg.name) continue;
        // Tests and build scripts may use dev dependencies (the workspace's or the root's); the shipped code may not.
        const ok =
          declared.has(name) ||
          ((isTest || isBuildScript) &&
            (name in (pkg.devDependencies ?? {}) ||
              name in (root.devDependencies ?? {}) ||
              workspaceNames.has(name)));
        if (!ok)
          problems.push(`${relative(repoRoot, file)} imports ${name}, which ${pkg.name} does not declare`);
      }
    }
    for (const name of declared)
      if (!usedByCode.has(name)) problems.push(`${pkg.name} declares ${name} but no source file imports it`);
    assert.deepEqual(problems, []);
  });
}

test('the cross-program tests, scripts and benchmarks import only what the root package.json declares', () => {
  const declared = new Set([
    ...Object.keys(root.devDependencies ?? {}),
    ...workspaces.map((dir) => readPackage(dir).name),
  ]);
  const problems: string[] = [];
  for (const folder of ['test', 'scripts', 'bench'])
    for (const file of typeScriptFiles(join(repoRoot, folder)))
      if (file !== import.meta.filename)
        for (const name of importedPackages(readFileSync(file, 'utf8')))
          if (!declared.has(name)) problems.push(`${relative(repoRoot, file)} imports undeclared ${name}`);
  assert.deepEqual(problems, []);
});

test('the import scanner sees value imports and re-exports, and skips type-only and relative ones', () => {
  const source = [
    "import { a } from 'alpha';",
    "import type { B } from 'beta';",
    "import x, { y } from '@scope/gamma/sub';",
    "export { z } from 'delta';",
    "import 'side-effect';",
    "const m = await import('epsilon');",
    "import { join } from 'node:path';",
    "import { readFileSync } from 'fs';",
    "import { here } from './here.ts';",
  ].join('\n');
  assert.deepEqual(importedPackages(source).sort(), [
    '@scope/gamma',
    'alpha',
    'delta',
    'epsilon',
    'side-effect',
  ]);
});
