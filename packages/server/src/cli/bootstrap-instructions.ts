import type { BootstrapTokenSource } from '../auth/bootstrap-token.ts';
import { shellQuote } from './shell-quote.ts';

/**
 * What `serve` prints while the instance is not bootstrapped: a curl line a
 * person can paste. The token itself appears only when it was generated at
 * start-up (there is no other way to learn it); a configured token is
 * referenced by its variable or file, never printed.
 */
export function bootstrapInstructions(
  baseUrl: string,
  source: Pick<BootstrapTokenSource, 'origin' | 'path' | 'generated'>,
): string {
  const authorization =
    source.origin === 'generated'
      ? `'Authorization: Bearer ${source.generated ?? ''}'`
      : source.origin === 'file'
        ? `"Authorization: Bearer $(cat ${shellQuote(source.path ?? '')})"`
        : '"Authorization: Bearer $TERDUT_BOOTSTRAP_TOKEN"';
  const where = {
    generated:
      'The token above was generated at start-up because neither TERDUT_BOOTSTRAP_TOKEN nor\n' +
      'TERDUT_BOOTSTRAP_TOKEN_FILE is set. It is printed only this once; a restart generates a new one.',
    file: `The token is read from ${source.path ?? ''} (TERDUT_BOOTSTRAP_TOKEN_FILE).`,
    environment: 'The token is the value of TERDUT_BOOTSTRAP_TOKEN.',
  }[source.origin];
  return (
    '\n' +
    'terdut-server has not been bootstrapped yet. Create the first admin and its API key with:\n\n' +
    `  curl -sS -X POST ${baseUrl.replace(/\/$/, '')}/api/bootstrap \\\n` +
    `    -H ${authorization} \\\n` +
    "    -H 'Content-Type: application/json' \\\n" +
    `    -d '{"username":"admin","email":"admin@example.com"}'\n\n` +
    `${where}\n` +
    'The answer carries the admin API key, shown once. Lost it later? POST /api/bootstrap/recover\n' +
    'with the same token, or run: terdut-server admin recover --username admin\n\n'
  );
}
