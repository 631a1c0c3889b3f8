/**
 * Builds terdut-server into JavaScript: packages/server/dist (and the
 * contract it imports, packages/contract/dist), what the image, `npm start`
 * and the benchmarks run through bin/terdut-server.
 *
 *   node packages/server/build.ts             build
 *   node packages/server/build.ts --if-stale  build only when a source changed since the last build
 *
 * Why build at all, when Node runs the TypeScript as it is: the type
 * stripper Node loads for the first .ts file stays resident, about 18 MiB of
 * the server's memory (bench/README.md, "Memory"). The output is the source
 * with its types erased (TypeScript's emitter, not type-checked: `npm run
 * typecheck` does that) and `./x.ts` imports rewritten to `./x.js`, one file
 * per source file, so stack traces name the same lines' files. The
 * contract's `terdut-dist` export condition (bin/terdut-server passes
 * `--conditions=terdut-dist`) points `@terdut/contract` at its built copy.
 *
 * TypeBox is the one dependency bundled: its package is about 370 ES
 * modules, and loading them one by one kept about 6 MiB more resident than
 * the same code as one file (bench/README.md, "Memory"). The contract's
 * build gets it as `dist/vendor/typebox.js` (esbuild), and every built
 * import of `typebox` is rewritten to it: `./vendor/typebox.js` inside the
 * contract, `@terdut/contract/typebox` in the server, so both share one copy.
 */
import type TypeScript from 'typescript';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const packagesDir = fileURLToPath(new URL('..', import.meta.url));
const repoRoot = join(packagesDir, '..');
/** Built in this order; each from `<package>/src` to `<package>/dist`. */
const BUILT_PACKAGES = ['contract', 'server'];
/** Files the server reads at run time beside its modules, copied as they are (relative to the package). */
const ASSETS: Record<string, string[]> = { server: ['db/migrations'] };
const stampFile = join(packagesDir, 'server', 'dist', 'build-stamp.txt');

function sourceFilesUnder(path: string): string[] {
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .flatMap((entry) => sourceFilesUnder(join(path, entry.name)))
    .filter((file) => !file.endsWith('.test.ts'));
}

/** A hash of every input's path and content: the sources, the assets, this script, the manifests. */
function sourceStamp(): string {
  const inputs = [
    ...BUILT_PACKAGES.flatMap((name) => [
      join(packagesDir, name, 'src'),
      join(packagesDir, name, 'package.json'),
    ]),
    fileURLToPath(import.meta.url),
    join(repoRoot, 'tsconfig.json'),
  ];
  const hash = createHash('sha256');
  for (const file of inputs.flatMap(sourceFilesUnder).sort()) {
    hash.update(relative(repoRoot, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/** Loaded only to build: bin/terdut-server checks the stamp on every start, and TypeScript takes a while to load. */
function typescript(): typeof TypeScript {
  return createRequire(import.meta.url)('typescript') as typeof TypeScript;
}

/** The repository's compiler options (tsconfig.json), set to emit JavaScript without checking. */
function emitOptions(ts: typeof TypeScript, rootDir: string, outDir: string): TypeScript.CompilerOptions {
  const configPath = join(repoRoot, 'tsconfig.json');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    configPath,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    },
  );
  if (parsed === undefined) throw new Error(`cannot read ${configPath}`);
  return {
    ...parsed.options,
    noEmit: false,
    noCheck: true,
    rootDir,
    outDir,
    sourceMap: false,
    declaration: false,
    // Emitted files keep their source's comments: they are what runs, and what an operator reads in a stack trace.
    removeComments: false,
  };
}

/** Emits `<package>/src` into `outDir`, with the package's assets. */
function emitPackage(ts: typeof TypeScript, name: string, outDir: string): void {
  const rootDir = join(packagesDir, name, 'src');
  const files = sourceFilesUnder(rootDir).filter((file) => file.endsWith('.ts'));
  const program = ts.createProgram(files, emitOptions(ts, rootDir, outDir));
  const result = program.emit();
  // Without type checking, what is left are syntax and option errors: each one is a broken build.
  const diagnostics = [
    ...program.getSyntacticDiagnostics(),
    ...program.getOptionsDiagnostics(),
    ...result.diagnostics,
  ];
  if (diagnostics.length > 0 || result.emitSkipped) {
    const text = ts.formatDiagnostics(diagnostics, {
      getCanonicalFileName: (fileName) => fileName,
      getCurrentDirectory: () => repoRoot,
      getNewLine: () => '\n',
    });
    throw new Error(`building packages/${name} failed:\n${text}`);
  }
  for (const asset of ASSETS[name] ?? [])
    cpSync(join(rootDir, asset), join(outDir, asset), { recursive: true });
}

/** Where the contract's build puts its one-file TypeBox, and how the server's build imports it. */
const TYPEBOX_BUNDLE = 'vendor/typebox.js';
const TYPEBOX_FOR_SERVER = '@terdut/contract/typebox';

/** TypeBox's public API as one ES module, for the contract's dist. */
async function bundleTypebox(contractDist: string): Promise<void> {
  const { build } = await import('esbuild');
  await build({
    stdin: {
      contents: "export * from 'typebox';\nexport { default } from 'typebox';\n",
      resolveDir: join(packagesDir, 'contract'),
      sourcefile: 'typebox-bundle.js',
    },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    legalComments: 'inline',
    outfile: join(contractDist, TYPEBOX_BUNDLE),
    logLevel: 'warning',
  });
}

/** Points every built `from 'typebox'` of a package at the bundle; a subpath import fails the build. */
function importBundledTypebox(name: string, dist: string): void {
  for (const file of sourceFilesUnder(dist).filter((path) => path.endsWith('.js'))) {
    if (file === join(dist, TYPEBOX_BUNDLE)) continue;
    const text = readFileSync(file, 'utf8');
    const subpath = /from ['"](typebox\/[^'"]*)['"]/.exec(text);
    if (subpath !== null) {
      throw new Error(
        `packages/${name}/src/${relative(dist, file).replace(/\.js$/, '.ts')} imports ${subpath[1]}: ` +
          "the built server bundles only 'typebox' itself; import from 'typebox', or add the subpath to build.ts",
      );
    }
    let target = TYPEBOX_FOR_SERVER;
    if (name === 'contract') {
      target = relative(dirname(file), join(dist, TYPEBOX_BUNDLE));
      if (!target.startsWith('.')) target = `./${target}`;
    }
    const rewritten = text.replace(/from (['"])typebox\1/g, `from '${target}'`);
    if (rewritten !== text) writeFileSync(file, rewritten);
  }
}

function isCurrent(stamp: string): boolean {
  return (
    BUILT_PACKAGES.every((name) => existsSync(join(packagesDir, name, 'dist'))) &&
    existsSync(stampFile) &&
    readFileSync(stampFile, 'utf8') === stamp
  );
}

/**
 * Builds when `ifStale` is not set or a source changed. Each package is
 * emitted beside its dist and then renamed into place, so a server starting
 * meanwhile never loads half a build; two builds at once write the same files.
 */
export async function buildServer(options: { ifStale?: boolean } = {}): Promise<{ built: boolean }> {
  const stamp = sourceStamp();
  if (options.ifStale && isCurrent(stamp)) return { built: false };
  const ts = typescript();
  for (const name of BUILT_PACKAGES) {
    const dist = join(packagesDir, name, 'dist');
    const next = `${dist}.${process.pid}.tmp`;
    rmSync(next, { recursive: true, force: true });
    emitPackage(ts, name, next);
    if (name === 'contract') await bundleTypebox(next);
    importBundledTypebox(name, next);
    if (name === 'server') writeFileSync(join(next, 'build-stamp.txt'), stamp);
    rmSync(dist, { recursive: true, force: true });
    try {
      renameSync(next, dist);
    } catch (error) {
      // Another build renamed its copy into place first: the same sources, the same files.
      rmSync(next, { recursive: true, force: true });
      if (!existsSync(dist)) throw error;
    }
  }
  console.log(`terdut-server built: ${BUILT_PACKAGES.map((name) => `packages/${name}/dist`).join(', ')}`);
  return { built: true };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await buildServer({ ifStale: process.argv.includes('--if-stale') });
}
