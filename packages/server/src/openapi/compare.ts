/**
 * What changed between two OpenAPI documents, sorted into breaking changes
 * (a client written against the old document stops working: a path or
 * operation gone, a response field removed or retyped, a request field newly
 * required or retyped) and additive ones (new paths, new optional fields,
 * changed descriptions). The committed docs/openapi.json is compared with the
 * generated one so every change to the wire shows in review.
 */

type Json = Record<string, unknown>;
export interface OpenApiChanges {
  breaking: string[];
  additive: string[];
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Classifies every difference between `before` (committed) and `after` (generated). */
export function compareOpenApi(before: Json, after: Json): OpenApiChanges {
  const changes: OpenApiChanges = { breaking: [], additive: [] };
  // Compared with references followed, so a change to a shared schema (the
  // Error body) counts in every operation that uses it.
  const oldPaths = withRefsFollowed(before.paths ?? {}, before) as Record<string, Json>;
  const newPaths = withRefsFollowed(after.paths ?? {}, after) as Record<string, Json>;
  for (const [path, oldItem] of Object.entries(oldPaths)) {
    for (const method of METHODS) {
      const oldOp = oldItem[method] as Json | undefined;
      if (!oldOp) continue;
      const where = `${method.toUpperCase()} ${path}`;
      const newOp = newPaths[path]?.[method] as Json | undefined;
      if (!newOp) {
        changes.breaking.push(`${where}: operation removed`);
        continue;
      }
      compareOperation(where, oldOp, newOp, changes);
    }
  }
  for (const [path, newItem] of Object.entries(newPaths)) {
    for (const method of METHODS) {
      if (newItem[method] && !oldPaths[path]?.[method]) {
        changes.additive.push(`${method.toUpperCase()} ${path}: operation added`);
      }
    }
  }
  if (changes.breaking.length === 0 && changes.additive.length === 0 && !same(before, after)) {
    changes.additive.push('descriptions or other annotations changed');
  }
  return changes;
}

/** `value` with each local `{"$ref": "#/…"}` of `document` replaced by what it points at. */
function withRefsFollowed(value: unknown, document: Json, seen: readonly string[] = []): unknown {
  if (Array.isArray(value)) return value.map((item) => withRefsFollowed(item, document, seen));
  if (value === null || typeof value !== 'object') return value;
  const ref = (value as Json).$ref;
  if (typeof ref === 'string' && ref.startsWith('#/') && !seen.includes(ref)) {
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>(
        (node, token) => (node as Json | undefined)?.[token.replaceAll('~1', '/').replaceAll('~0', '~')],
        document,
      );
    if (target !== undefined) return withRefsFollowed(target, document, [...seen, ref]);
  }
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [key, withRefsFollowed(item, document, seen)]),
  );
}

function compareOperation(where: string, oldOp: Json, newOp: Json, changes: OpenApiChanges): void {
  // Generated clients name their functions after it: a new one renames them.
  const [oldId, newId] = [oldOp.operationId, newOp.operationId] as [string | undefined, string | undefined];
  if (oldId !== undefined && newId !== oldId) {
    changes.breaking.push(`${where}: operationId ${oldId} became ${newId ?? '(none)'}`);
  }
  // Parameters (path and query): a new required one or a retyped one breaks callers.
  const params = (op: Json) =>
    new Map(((op.parameters ?? []) as Json[]).map((p) => [`${String(p.in)} ${String(p.name)}`, p]));
  const oldParams = params(oldOp);
  const newParams = params(newOp);
  for (const [key, param] of newParams) {
    const old = oldParams.get(key);
    if (!old) {
      (param.required ? changes.breaking : changes.additive).push(`${where}: parameter ${key} added`);
    } else {
      compareSchema(
        `${where} parameter ${key}`,
        old.schema as Json,
        param.schema as Json,
        'request',
        changes,
      );
    }
  }
  for (const key of oldParams.keys()) {
    if (!newParams.has(key)) changes.breaking.push(`${where}: parameter ${key} removed`);
  }
  const body = (op: Json) =>
    ((op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined)?.['application/json']
      ?.schema as Json | undefined;
  compareSchema(`${where} request body`, body(oldOp), body(newOp), 'request', changes);
  const responses = (op: Json) => (op.responses ?? {}) as Record<string, Json>;
  const oldResponses = responses(oldOp);
  const newResponses = responses(newOp);
  for (const [status, response] of Object.entries(oldResponses)) {
    const schemaOf = (r: Json | undefined) =>
      ((r?.content as Record<string, Json> | undefined)?.['application/json']?.schema ?? undefined) as
        Json | undefined;
    if (!newResponses[status]) {
      // A success status going away breaks clients; an error no longer declared does not.
      (status.startsWith('2') ? changes.breaking : changes.additive).push(
        `${where}: response ${status} removed`,
      );
      continue;
    }
    compareSchema(
      `${where} response ${status}`,
      schemaOf(response),
      schemaOf(newResponses[status]),
      'response',
      changes,
    );
  }
  for (const status of Object.keys(newResponses)) {
    if (!oldResponses[status]) changes.additive.push(`${where}: response ${status} declared`);
  }
}

/**
 * Compares two schemas. In a response, removing or retyping a field breaks
 * readers; in a request, a new required field or a retyped one breaks senders.
 */
function compareSchema(
  where: string,
  before: Json | undefined,
  after: Json | undefined,
  side: 'request' | 'response',
  changes: OpenApiChanges,
): void {
  if (before === undefined && after === undefined) return;
  if (before === undefined || after === undefined) {
    (side === 'request' && after !== undefined ? changes.breaking : changes.additive).push(
      `${where}: ${after === undefined ? 'removed' : 'added'}`,
    );
    return;
  }
  if (typeOf(before) !== typeOf(after)) {
    changes.breaking.push(`${where}: type ${typeOf(before)} became ${typeOf(after)}`);
    return;
  }
  if (!same(enumOf(before), enumOf(after))) {
    changes.breaking.push(`${where}: allowed values ${enumOf(before)} became ${enumOf(after)}`);
  }
  if (before.items || after.items) {
    compareSchema(`${where}[]`, before.items as Json, after.items as Json, side, changes);
  }
  const oldProps = (before.properties ?? {}) as Record<string, Json>;
  const newProps = (after.properties ?? {}) as Record<string, Json>;
  const oldRequired = new Set((before.required ?? []) as string[]);
  const newRequired = new Set((after.required ?? []) as string[]);
  for (const [name, schema] of Object.entries(oldProps)) {
    const field = `${where}.${name}`;
    if (!(name in newProps)) {
      changes.breaking.push(`${field}: field removed`);
      continue;
    }
    if (side === 'response' && oldRequired.has(name) && !newRequired.has(name)) {
      changes.breaking.push(`${field}: no longer always present`);
    }
    if (side === 'request' && !oldRequired.has(name) && newRequired.has(name)) {
      changes.breaking.push(`${field}: now required`);
    }
    compareSchema(field, schema, newProps[name], side, changes);
  }
  for (const name of Object.keys(newProps)) {
    if (name in oldProps) continue;
    const field = `${where}.${name}`;
    if (side === 'request' && newRequired.has(name)) changes.breaking.push(`${field}: required field added`);
    else changes.additive.push(`${field}: field added`);
  }
}

/** `type`, or the types of a union (`anyOf`), or the literal's const, as text. */
function typeOf(schema: Json): string {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map(typeOf).sort().join('|');
  if (Array.isArray(schema.type)) return [...(schema.type as string[])].sort().join('|');
  if (schema.type === undefined && 'const' in schema) return typeof schema.const;
  return typeof schema.type === 'string' ? schema.type : 'any';
}

/** The allowed values (`const`, `enum`, or a union of them), as sorted JSON; `[]` when any value goes. */
function enumOf(schema: Json): string {
  const valuesOf = (member: Json): unknown[] =>
    'const' in member ? [member.const] : Array.isArray(member.enum) ? (member.enum as unknown[]) : [];
  const values = Array.isArray(schema.anyOf) ? (schema.anyOf as Json[]).flatMap(valuesOf) : valuesOf(schema);
  return JSON.stringify(values.map((value) => JSON.stringify(value)).sort());
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
