/**
 * The OpenAPI document of the server, exactly as `GET /api/openapi.json`
 * serves it, built from the contract's schemas by the route declarations.
 */
import { buildApp } from '../app.ts';
import { loadConfig } from '../config.ts';
import { openPglite } from '../db/database.ts';

/** Builds the app on an empty in-memory database (no query runs) and returns its document. */
export async function openApiDocument(): Promise<Record<string, unknown>> {
  const db = await openPglite(undefined);
  try {
    // A fixed token keeps start-up quiet; nothing in the document depends on configuration.
    const config = loadConfig({ TERDUT_BOOTSTRAP_TOKEN: 'openapi-generation-token-0123456789abcdef' });
    const app = await buildApp({ db, config });
    await app.ready();
    const document = JSON.parse(JSON.stringify(app.swagger())) as Record<string, unknown>;
    await app.close();
    return document;
  } finally {
    await db.close();
  }
}

/** The committed form: two-space JSON with a final newline, as prettier leaves it. */
export function formatDocument(document: unknown): string {
  return JSON.stringify(document, null, 2) + '\n';
}
