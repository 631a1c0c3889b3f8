/**
 * The physical limit the intake benchmarks compare with: single-row INSERT
 * transactions (one commit each) of a row shaped like our `alerts` row,
 * from CONCURRENCY connections (bench/README.md, "How to read the intake
 * figures"). `bench:intake` and `bench:intake-floor` divide by it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openPglite } from '../../packages/server/src/db/database.ts';
import { notificationOfSize } from '../../test/support/alertmanager-payloads.ts';
import { CONCURRENCY, drive, type Measured } from './intake-load.ts';

/** The raw figure's table, shaped like our `alerts` row; the bare intake server stores into it too. */
export const RAW_TABLE = `
  CREATE TABLE raw_alerts (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    fingerprint text NOT NULL UNIQUE,
    group_key text NOT NULL,
    name text NOT NULL,
    status text NOT NULL,
    labels jsonb NOT NULL,
    annotations jsonb NOT NULL,
    starts_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
  )`;
const RAW_INSERT = `INSERT INTO raw_alerts (fingerprint, group_key, name, status, labels, annotations, starts_at, received_at, last_seen_at)
  VALUES ($1, $2, $3, 'firing', $4, $5, $6, now(), now())`;

function rawRow(worker: number, sequence: number): unknown[] {
  const name = `Raw${worker}n${sequence}`;
  const alert = notificationOfSize(1, { name }).alerts[0]!;
  return [
    alert.fingerprint,
    `{}:{alertname="${name}"}`,
    name,
    alert.labels,
    alert.annotations,
    alert.startsAt,
  ];
}

/** Single-row INSERT transactions (autocommit: one commit each) from CONCURRENCY connections. */
export async function rawPostgresInsertRate(url: string): Promise<Measured> {
  const setup = new pg.Client({ connectionString: url });
  await setup.connect();
  await setup.query(RAW_TABLE);
  await setup.end();
  const clients = await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  try {
    return await drive(async (worker, sequence) => {
      await clients[worker]!.query(RAW_INSERT, rawRow(worker, sequence));
      return 1;
    });
  } finally {
    await Promise.all(clients.map((client) => client.end()));
  }
}

/** The same on an embedded PGlite in a data directory (one connection: the inserts queue). */
export async function rawPgliteInsertRate(): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'terdut-bench-raw-'));
  const db = await openPglite(dir);
  try {
    await db.exec(RAW_TABLE);
    return await drive(async (worker, sequence) => {
      await db.query(RAW_INSERT, rawRow(worker, sequence));
      return 1;
    });
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
