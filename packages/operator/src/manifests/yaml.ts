/**
 * A tiny block-style YAML writer for the generated manifests: objects,
 * arrays, strings (always double-quoted, using JSON escapes, which YAML
 * accepts), numbers, booleans. Enough for Kubernetes objects; no anchors, no
 * multi-line scalars. Avoids a YAML dependency for one generator.
 */
export function toYaml(value: unknown, indent = 0): string {
  return `${render(value, indent)}\n`;
}

function scalar(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null || value === undefined) return 'null';
  throw new Error(`cannot write ${typeof value} as YAML`);
}

function isEmptyCollection(value: unknown): boolean {
  return (
    (Array.isArray(value) && value.length === 0) ||
    (value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0)
  );
}

function key(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_./-]*$/.test(name) ? name : JSON.stringify(name);
}

function render(value: unknown, indent: number): string {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return `${pad}[]`;
    return value
      .map((item) => {
        if (item !== null && typeof item === 'object' && !isEmptyCollection(item)) {
          const inner = render(item, indent + 2);
          return `${pad}- ${inner.slice(indent + 2)}`;
        }
        return `${pad}- ${inline(item)}`;
      })
      .join('\n');
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return `${pad}{}`;
    return entries
      .map(([name, item]) =>
        item !== null && typeof item === 'object' && !isEmptyCollection(item)
          ? `${pad}${key(name)}:\n${render(item, Array.isArray(item) ? indent : indent + 2)}`
          : `${pad}${key(name)}: ${inline(item)}`,
      )
      .join('\n');
  }
  return `${pad}${scalar(value)}`;
}

function inline(value: unknown): string {
  if (Array.isArray(value)) return '[]';
  if (value !== null && typeof value === 'object') return '{}';
  return scalar(value);
}

/** Several objects as one multi-document YAML stream. */
export function toYamlDocuments(objects: unknown[]): string {
  return objects.map((object) => toYaml(object)).join('---\n');
}
