/**
 * terdut-operator's version, read from this package's package.json (all three
 * packages share one version, `npm run version:set`), and the terdut-server
 * image of that same version, which the operator runs when a TerdutServer
 * names no `spec.image`: operator and server are released together.
 */
import { readFileSync } from 'node:fs';

export const VERSION = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

export const SERVER_IMAGE_REPOSITORY = 'ghcr.io/ryuvia/terdut-server';
export const OPERATOR_IMAGE_REPOSITORY = 'ghcr.io/ryuvia/terdut-operator';
export const DEFAULT_SERVER_IMAGE = `${SERVER_IMAGE_REPOSITORY}:${VERSION}`;
