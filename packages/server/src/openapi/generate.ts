#!/usr/bin/env node
/**
 * Writes docs/openapi.json and docs/api.md from the server's routes and the
 * contract (`npm run generate:openapi`), or with `--check` exits 1 when the
 * committed files differ from what the code generates.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { formatDocument, openApiDocument } from './document.ts';
import { renderApiMarkdown } from './markdown.ts';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** Path (relative to the repository root) → generated content. */
export async function generatedApiDocs(): Promise<Record<string, string>> {
  const document = await openApiDocument();
  return { 'docs/openapi.json': formatDocument(document), 'docs/api.md': renderApiMarkdown(document) };
}

async function main(check: boolean): Promise<number> {
  const stale: string[] = [];
  for (const [path, content] of Object.entries(await generatedApiDocs())) {
    const file = join(repoRoot, path);
    let current: string | undefined;
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === content) continue;
    if (check) stale.push(path);
    else {
      writeFileSync(file, content);
      process.stdout.write(`wrote ${path}\n`);
    }
  }
  if (stale.length > 0) {
    process.stderr.write(
      `API docs are out of date: ${stale.join(', ')}\nrun \`npm run generate:openapi\` and commit the result\n`,
    );
    return 1;
  }
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`)
  process.exitCode = await main(process.argv.includes('--check'));
