/**
 * terdut's version, read from this package's package.json -- the one place it
 * is set (`npm run version:set`, see CHANGELOG.md). Shown by `--version`,
 * `/healthz`, the OpenAPI document and the image labels.
 */
import { readFileSync } from 'node:fs';

export const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
