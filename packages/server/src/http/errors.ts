import type { FastifyError, FastifyInstance } from 'fastify';
import { ApiError } from '../errors.ts';
import { unsupportedBodyType } from './json-bodies.ts';

/**
 * Every error leaves as `status` + `{"error": message}` (api-contract.md).
 * Validation errors name the field; unexpected errors become a plain 500 and
 * keep their details in the log only.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError | Error, request, reply) => {
    if (error instanceof ApiError) {
      if (error.retryAfterSeconds !== undefined) reply.header('retry-after', String(error.retryAfterSeconds));
      // RFC 9110 section 15.5.2: a 401 names the scheme that works. Every credential a
      // protected route takes in a header is a Bearer one; a public route's 401 (a wrong
      // password at sign-in) is no challenge.
      if (error.status === 401 && request.routeOptions.config?.auth?.kind !== 'public') {
        reply.header('www-authenticate', 'Bearer');
      }
      return reply.status(error.status).send({ error: error.message });
    }
    const fastifyError = error as FastifyError;
    if (fastifyError.validation) {
      return reply.status(400).send({ error: describeValidation(fastifyError) });
    }
    if (fastifyError.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      // Fastify says only "Unsupported Media Type": name the type sent and the one that works.
      return reply.status(415).send({ error: unsupportedBodyType(request.headers['content-type']).message });
    }
    const status = fastifyError.statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      return reply.status(status).send({ error: fastifyError.message });
    }
    // Code, message and stack only: database errors may carry statement
    // parameters or row values (detail) that do not belong in a log.
    const { name, message, stack, code } = error as Error & { code?: unknown };
    request.log.error({ err: { type: name, message, stack, code } }, 'request failed');
    return reply.status(500).send({ error: 'internal server error; see the server log for details' });
  });
  app.setNotFoundHandler((request, reply) => {
    return reply.status(404).send({ error: `no route for ${request.method} ${request.url.split('?')[0]}` });
  });
}

function describeValidation(error: FastifyError): string {
  const first = error.validation?.[0];
  if (!first) return error.message;
  const context = error.validationContext ?? 'body';
  const path = first.instancePath.replace(/^\//, '').replaceAll('/', '.');
  const params: Record<string, unknown> = first.params;
  if (first.keyword === 'required') {
    const missing = String(params.missingProperty);
    return `${context === 'body' ? '' : context + ' '}field "${path ? path + '.' : ''}${missing}" is required`;
  }
  if (first.keyword === 'additionalProperties') {
    return `${context} field "${String(params.additionalProperty)}" is not allowed`;
  }
  const field = path || context;
  // An error in a key (propertyNames): say which key, not only which object.
  const propertyName = (first as { propertyName?: unknown }).propertyName;
  if (typeof propertyName === 'string') {
    return `${context === 'body' ? '' : context + ' '}field "${field}" has a key "${propertyName.slice(0, 40)}" that ${first.message ?? 'is invalid'}`;
  }
  // A contract schema may say in words what its pattern or limits mean.
  const explained: unknown = (first as { parentSchema?: { errorMessage?: unknown } }).parentSchema
    ?.errorMessage;
  let message = typeof explained === 'string' ? explained : (first.message ?? 'is invalid');
  const sent: unknown = (first as { data?: unknown }).data;
  // "must be equal to constant" says neither which: a literal names its value, and a union of
  // literals, which fails on its first choice, all of them. In a union of objects the first
  // branch's literal is not the only choice: its message stays.
  const errors = error.validation!;
  const choices =
    first.keyword !== 'const'
      ? undefined
      : (choicesAt(errors, first.instancePath) ??
        (errors.some((other) => other.keyword === 'anyOf') ? undefined : [params.allowedValue]));
  if (choices !== undefined) {
    const listed = choices.map((choice) => JSON.stringify(choice));
    message = `must be ${listed.length > 1 ? 'one of ' : ''}${listed.join(', ')}, got ${JSON.stringify(sent)?.slice(0, 40)}`;
  }
  // A form error (never a length error, which could echo a password) shows what was sent.
  if ((first.keyword === 'pattern' || first.keyword === 'format') && typeof sent === 'string') {
    message += `, got ${JSON.stringify(sent.slice(0, 40))}`;
  }
  return `${context === 'body' ? '' : context + ' '}field "${field}" ${message}`.trim();
}

/** The values of a union of literals (an `anyOf` of `const`s) that failed at this place, if that is what failed. */
function choicesAt(
  errors: NonNullable<FastifyError['validation']>,
  instancePath: string,
): unknown[] | undefined {
  const union = errors.find(
    (candidate) => candidate.keyword === 'anyOf' && candidate.instancePath === instancePath,
  );
  const branches: unknown = (union as { schema?: unknown } | undefined)?.schema;
  if (!Array.isArray(branches)) return undefined;
  const literal = (branch: unknown): branch is { const: unknown } =>
    typeof branch === 'object' && branch !== null && 'const' in branch;
  return branches.every(literal) ? branches.map((branch) => branch.const) : undefined;
}
