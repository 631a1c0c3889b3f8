import type { FastifyInstance } from 'fastify';
import { badRequest } from '../errors.ts';

/**
 * Refuses text PostgreSQL cannot store, in every JSON body, query string and
 * path parameter, before any handler sees it: NUL (`\u0000`, which neither a
 * `text` column nor `jsonb` accepts) and unpaired UTF-16 surrogates (`\ud800`,
 * which has no UTF-8 form). Without this check such a value fails inside the
 * transaction as a 500, and Alertmanager retries a 5xx forever, so one bad
 * alert would block every later notification of its group. A 400 naming the
 * field is final: Alertmanager drops that notification, and the group's next
 * valid one is applied.
 */
export function installTextSafety(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    for (const [part, value] of [
      ['path', request.params],
      ['query', request.query],
      ['body', request.body],
    ] as const) {
      const bad = findUnstorableText(value);
      if (bad !== undefined) {
        const where = part === 'body' ? '' : `${part} `;
        throw badRequest(
          `${where}field "${bad.path || part}" ${bad.inKey ? 'has a key that contains' : 'contains'} ` +
            'a NUL character or an unpaired surrogate, which cannot be stored; remove it',
        );
      }
    }
  });
}

/** Whether `text` can be stored: no NUL, only paired surrogates. */
export function isStorableText(text: string): boolean {
  return !text.includes('\u0000') && text.isWellFormed();
}

/**
 * The first string (value or object key) in `value` that cannot be stored,
 * with its dotted path. Walks with an explicit stack: a deeply nested body
 * must not overflow the call stack.
 */
export function findUnstorableText(value: unknown): { path: string; inKey: boolean } | undefined {
  const stack: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    if (typeof current === 'string') {
      if (!isStorableText(current)) return { path, inKey: false };
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => stack.push({ value: item, path: join(path, String(index)) }));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        if (!isStorableText(key)) return { path, inKey: true };
        stack.push({ value: item, path: join(path, key) });
      }
    }
  }
  return undefined;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}
