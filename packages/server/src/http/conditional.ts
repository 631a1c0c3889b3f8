/**
 * Conditional GET (RFC 9110 §13.1.2): whether an `If-None-Match` header
 * names the representation's entity tag, so the answer can be 304 Not
 * Modified without a body. Weak comparison, as the RFC asks for GET: `W/` is
 * ignored on both sides; `*` matches any current representation.
 */
export function ifNoneMatchHits(header: string | string[] | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  const wanted = opaque(etag);
  return (Array.isArray(header) ? header.join(',') : header)
    .split(',')
    .some((tag) => tag.trim() === '*' || opaque(tag) === wanted);
}
