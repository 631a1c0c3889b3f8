/**
 * Does an answer the server gave match what the OpenAPI document promises
 * for it? Read the way a generated client reads the document: the status
 * must be one the operation lists, the media type one it lists for that
 * status (none for 204 and 304), and the body must validate against that
 * schema under JSON Schema 2020-12 (OpenAPI 3.1's dialect) with formats
 * checked, so a `date-time` that is not one, a `null` where the schema has
 * none, or a required field left out is a finding. Used by the tests that
 * call a real app and hold every answer to the document.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsPlugin from 'ajv-formats';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = addFormatsPlugin as unknown as (ajv: Ajv2020) => Ajv2020;

export interface OpenApiResponse {
  description?: string;
  content?: Record<string, { schema?: unknown }>;
}
export interface OpenApiParameter {
  in: string;
  name: string;
  required?: boolean;
  description?: string;
  schema?: unknown;
}
export interface OpenApiOperation {
  operationId?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: OpenApiParameter[];
  requestBody?: unknown;
  responses: Record<string, OpenApiResponse>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** Every operation with its path template, method and `METHOD /path` name. */
export function operationsOf(
  document: OpenApiDocument,
): Array<{ path: string; method: string; where: string; operation: OpenApiOperation }> {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method] !== undefined).map((method) => ({
      path,
      method,
      where: `${method.toUpperCase()} ${path}`,
      operation: item[method]!,
    })),
  );
}

/** An answer as `app.inject` gives it. */
export interface Answer {
  statusCode: number;
  headers: Record<string, unknown>;
  body: string;
}

/** JSON pointer token, then URI-fragment escaped (`{id}` is not fragment text). */
const pointer = (token: string) => encodeURIComponent(token.replaceAll('~', '~0').replaceAll('/', '~1'));

/**
 * A checker of answers against `document`.
 *
 * @example
 *   const check = answerValidator(document);
 *   assert.deepEqual(check.problems('GET', '/api/incidents', await app.inject('/api/incidents')), []);
 */
export function answerValidator(document: OpenApiDocument) {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true, validateSchema: false }));
  ajv.addSchema(document, 'openapi.json');
  const templates = Object.keys(document.paths).map((path) => ({
    path,
    parameters: (path.match(/\{/g) ?? []).length,
    pattern: new RegExp(
      '^' + path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+') + '$',
    ),
  }));

  /** The path template a concrete path is served under; a literal segment beats a parameter. */
  function templateOf(path: string): string | undefined {
    return templates
      .filter((template) => template.pattern.test(path))
      .sort((a, b) => a.parameters - b.parameters)[0]?.path;
  }

  /** The compiled schema of `where`'s `status` answer as `type`; throws when it does not compile. */
  function schemaFor(where: string, status: string, type: string): ValidateFunction {
    const [method, path] = where.split(' ') as [string, string];
    const ref =
      `openapi.json#/paths/${pointer(path)}/${method.toLowerCase()}` +
      `/responses/${status}/content/${pointer(type)}/schema`;
    const validate = ajv.getSchema(ref);
    if (validate === undefined) throw new Error(`${where} ${status} has no ${type} schema`);
    return validate;
  }

  /** What is wrong with `answer` to `method url` by the document; empty when nothing is. */
  function problems(method: string, url: string, answer: Answer): string[] {
    const path = url.split('?')[0]!;
    const template = templateOf(path);
    const where = `${method.toUpperCase()} ${template ?? path}`;
    if (template === undefined) return [`${method} ${path}: no path of the document matches`];
    const operation = document.paths[template]![method.toLowerCase()];
    if (operation === undefined) return [`${where}: not an operation of the document`];
    const status = String(answer.statusCode);
    const response =
      operation.responses[status] ?? operation.responses[`${status[0]}XX`] ?? operation.responses.default;
    if (response === undefined) {
      return [
        `${where} answered ${status}, which it does not document ` +
          `(it documents ${Object.keys(operation.responses).join(', ')}): ${answer.body.slice(0, 200)}`,
      ];
    }
    const documentedTypes = Object.keys(response.content ?? {});
    if (answer.body.length === 0) {
      return documentedTypes.length === 0
        ? []
        : [`${where} ${status} answered no body; the document promises ${documentedTypes.join(', ')}`];
    }
    const header = answer.headers['content-type'];
    const contentType = typeof header === 'string' ? header : '';
    const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
    if (!documentedTypes.includes(mediaType)) {
      return [
        `${where} ${status} answered ${contentType || 'no content type'}; ` +
          `the document says ${documentedTypes.join(', ') || 'no body'}`,
      ];
    }
    if (!/[/+]json$/.test(mediaType)) return [];
    let body: unknown;
    try {
      body = JSON.parse(answer.body);
    } catch {
      return [`${where} ${status} is ${mediaType} but not JSON: ${answer.body.slice(0, 200)}`];
    }
    const validate = schemaFor(where, status, mediaType);
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (error) =>
        `${where} ${status}: ${error.instancePath || '(body)'} ${error.message ?? ''} ` +
        `${JSON.stringify(error.params)} (schema ${error.schemaPath})`,
    );
  }

  return { problems, schemaFor, templateOf };
}
