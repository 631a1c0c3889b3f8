/**
 * Builds the web app into packages/web/dist: `index.html` plus
 * `assets/app-<hash>.js` and `assets/app-<hash>.css` (content-hashed names,
 * so the server can let browsers cache them for a year).
 *
 *   node packages/web/build.ts             build
 *   node packages/web/build.ts --if-stale  build only when a source changed since the last build
 *
 * `npm start` runs the second form first (root `prestart`), so a fresh clone
 * needs no extra command; it takes well under a second with esbuild.
 */
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('.', import.meta.url));
const dist = join(root, 'dist');
const stampFile = join(dist, 'build-stamp.txt');
/** Everything the bundle is made of: a change to any of these makes the bundle stale. */
const inputs = [
  join(root, 'src'),
  join(root, '../client/src'),
  join(root, 'build.ts'),
  join(root, 'package.json'),
];

function filesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .flatMap((entry) => filesUnder(join(path, entry.name)))
    .filter((file) => !file.endsWith('.test.ts'));
}

/** A hash of every input file's path and content. */
function sourceStamp(): string {
  const hash = createHash('sha256');
  for (const file of inputs.flatMap(filesUnder).sort()) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

export async function buildWebApp(options: { ifStale?: boolean } = {}): Promise<{ built: boolean }> {
  const stamp = sourceStamp();
  if (
    options.ifStale &&
    existsSync(join(dist, 'index.html')) &&
    existsSync(stampFile) &&
    readFileSync(stampFile, 'utf8') === stamp
  )
    return { built: false };

  rmSync(dist, { recursive: true, force: true });
  mkdirSync(join(dist, 'assets'), { recursive: true });
  const result = await build({
    entryPoints: { app: join(root, 'src/main.tsx') },
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: join(dist, 'assets'),
    entryNames: '[name]-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => file.split('/').pop()!);
  const script = outputs.find((name) => name.endsWith('.js'));
  const style = outputs.find((name) => name.endsWith('.css'));
  if (script === undefined || style === undefined) throw new Error(`esbuild wrote ${outputs.join(', ')}`);
  // No inline script or style: the server's Content-Security-Policy forbids both.
  writeFileSync(
    join(dist, 'index.html'),
    `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>terdut</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/${style}">
<script type="module" src="/assets/${script}"></script>
</head>
<body>
<div id="app"><noscript>terdut needs JavaScript.</noscript></div>
</body>
</html>
`,
  );
  writeFileSync(stampFile, stamp);
  const gzipped = gzipSync(readFileSync(join(dist, 'assets', script))).length;
  console.log(`web app built: dist/assets/${script} (${(gzipped / 1024).toFixed(1)} KB gzipped), ${style}`);
  return { built: true };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildWebApp({ ifStale: process.argv.includes('--if-stale') });
}
