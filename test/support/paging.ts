/**
 * Test support for paging: the set-up most paging tests share, a person on
 * call (days of the default schedule, through the day API) who can be
 * reached by one contact method.
 */
import type { TestApp, TestUser } from './app.ts';

/**
 * Puts `person` on call on `dates` (as `admin`) and gives them one contact method.
 *
 * @example await onCallWith(server, admin, gina, ['2026-12-03'], { kind: 'webhook', target: receiver.url });
 */
export async function onCallWith(
  server: TestApp,
  admin: TestUser,
  person: TestUser,
  dates: string[],
  contactMethod: Record<string, unknown>,
): Promise<void> {
  await server.request({
    method: 'POST',
    url: '/api/schedule',
    as: admin,
    payload: { user_id: person.id, dates },
  });
  await server.request({
    method: 'POST',
    url: `/api/users/${person.id}/contact-methods`,
    as: person,
    payload: contactMethod,
  });
}
