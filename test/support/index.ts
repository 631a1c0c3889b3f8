/**
 * The one place tests beside the code take their helpers from
 * (`import { startTestApp, forEachDatabase } from '@terdut/test-support'`):
 * an in-process app, databases, users with keys, Alertmanager payloads and
 * server processes. Cross-program tests under test/ may import the modules
 * directly; benchmarks (bench/) may import from here, never the reverse.
 */
export * from './app.ts';
export * from './databases.ts';
export * from './users.ts';
export * from './alertmanager-payloads.ts';
export * from './incidents.ts';
export * from './server-process.ts';
export * from './webhook-receiver.ts';
export * from './smtp-sink.ts';
export * from './paging.ts';
export * from './statistics-reference.ts';
export * from './intake-calls.ts';
