import type { Queryable } from '../db/database.ts';

/** Failures of one bucket since `since`: how many, and the newest-first times (at most `limit`). */
export async function recentFailures(
  db: Queryable,
  bucket: string,
  since: Date,
  limit: number,
): Promise<Date[]> {
  const result = await db.query<{ failed_at: Date }>(
    `SELECT failed_at FROM sign_in_failures WHERE bucket = $1 AND failed_at > $2
      ORDER BY failed_at DESC LIMIT $3`,
    [bucket, since, limit],
  );
  return result.rows.map((row) => new Date(row.failed_at));
}

/** Records one failure in each bucket, and drops failures older than `pruneBefore` (no longer counted). */
export async function recordFailures(
  db: Queryable,
  buckets: string[],
  now: Date,
  pruneBefore: Date,
): Promise<void> {
  await db.query(`INSERT INTO sign_in_failures (bucket, failed_at) SELECT unnest($1::text[]), $2`, [
    buckets,
    now,
  ]);
  await db.query(`DELETE FROM sign_in_failures WHERE failed_at < $1`, [pruneBefore]);
}

/** Forgets a bucket's failures (after a successful sign-in of that username). */
export async function clearFailures(db: Queryable, bucket: string): Promise<void> {
  await db.query(`DELETE FROM sign_in_failures WHERE bucket = $1`, [bucket]);
}

/**
 * Locks these buckets until the transaction ends, in one order (so two
 * transactions never wait for each other's), on every replica.
 */
export async function lockBuckets(tx: Queryable, buckets: readonly string[]): Promise<void> {
  for (const bucket of [...buckets].sort()) {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`sign_in_failures:${bucket}`]);
  }
}

/** Takes back one failure of each bucket recorded at `at` (an attempt that turned out right). */
export async function forgetFailures(tx: Queryable, buckets: readonly string[], at: Date): Promise<void> {
  await tx.query(
    `DELETE FROM sign_in_failures f
      WHERE f.ctid IN (SELECT DISTINCT ON (bucket) ctid FROM sign_in_failures
                        WHERE bucket = ANY($1::text[]) AND failed_at = $2)`,
    [buckets, at],
  );
}
