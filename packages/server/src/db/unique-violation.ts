/**
 * True when `error` is PostgreSQL's unique_violation (SQLSTATE 23505), as
 * thrown by both node-postgres and PGlite. Services turn it into a 409: the
 * constraint, not a prior SELECT, is what settles a race between two inserts.
 */
export function isUniqueViolation(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
}
