/**
 * The terdut-server HTTP contract, written once: TypeBox schemas of every
 * request and response body, query and path parameter and error, with their
 * TypeScript types. The server validates with them and publishes them as
 * /api/openapi.json (committed as docs/openapi.json); @terdut/client, the web
 * app and the tests import the same types, so a change to the wire is a type
 * error in every consumer that reads or builds it wrongly.
 *
 * @example
 *   import type { Incident } from '@terdut/contract';
 */
export * from './common.ts';
export * from './users.ts';
export * from './incidents.ts';
export * from './schedule.ts';
export * from './schedules.ts';
export * from './webhook.ts';
export * from './paging.ts';
export * from './server-info.ts';
export * from './escalation-policies.ts';
