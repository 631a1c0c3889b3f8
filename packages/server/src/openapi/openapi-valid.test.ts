/**
 * The published document read the way OpenAPI tooling reads it: a maintained
 * OpenAPI 3.1 validator, then the rules code generators and API clients rely
 * on that the meta-schema cannot state (unique operation ids, declared
 * security schemes, one error schema, schemas a JSON Schema 2020-12 validator
 * compiles, answers without bodies described without content).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { openApiDocument } from './document.ts';
import { answerValidator, operationsOf, type OpenApiDocument } from './answer-conformance.ts';

// Building the app once is enough for every test here.
const generated = openApiDocument() as unknown as Promise<OpenApiDocument>;

test('the document is valid OpenAPI 3.1 to a maintained validator', async () => {
  const validator = new Validator();
  const result = await validator.validate(
    structuredClone(await generated) as unknown as Record<string, unknown>,
  );
  assert.equal(validator.version, '3.1');
  assert.deepEqual(result.errors, undefined, JSON.stringify(result.errors, null, 2));
  assert.equal(result.valid, true);
});

test('a document with a broken response schema is refused by the same validator', async () => {
  const broken = structuredClone(await generated);
  const first = Object.values(broken.paths)[0]!;
  const operation = Object.values(first)[0] as { responses: Record<string, unknown> };
  operation.responses['200'] = { content: { 'application/json': { schema: {} } } }; // no description
  assert.equal((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid, false);
});

test('every operation has an operationId, and no two share one', async () => {
  const seen = new Map<string, string>();
  for (const { where, operation } of operationsOf(await generated)) {
    const id = operation.operationId;
    assert.equal(typeof id, 'string', `${where} has no operationId`);
    assert.match(id!, /^[a-z][A-Za-z0-9]*$/, `${where}: operationId ${id} is not camelCase`);
    assert.equal(seen.get(id!), undefined, `${where} and ${seen.get(id!)} share operationId ${id}`);
    seen.set(id!, where);
  }
});

test('operationIds name the method and the path, so they stay as stable as the paths', async () => {
  const ids = new Map(
    operationsOf(await generated).map(({ where, operation }) => [where, operation.operationId]),
  );
  assert.equal(ids.get('GET /api/incidents'), 'getIncidents');
  assert.equal(ids.get('GET /api/incidents/{id}'), 'getIncidentsById');
  assert.equal(ids.get('POST /api/incidents/{id}/acknowledge'), 'postIncidentsByIdAcknowledge');
  assert.equal(ids.get('DELETE /api/users/{id}/api-keys/{key_id}'), 'deleteUsersByIdApiKeysByKeyId');
  assert.equal(ids.get('POST /auth/login'), 'postAuthLogin');
});

test('every security requirement names a declared scheme', async () => {
  const document = await generated;
  const schemes = Object.keys(document.components?.securitySchemes ?? {});
  for (const { where, operation } of operationsOf(document)) {
    for (const requirement of operation.security ?? []) {
      for (const scheme of Object.keys(requirement)) {
        assert.ok(schemes.includes(scheme), `${where} requires undeclared security scheme ${scheme}`);
      }
    }
  }
});

/**
 * What docs/api-contract.md marks public: no Authorization header. The
 * calendar feed and the page's Acknowledge carry their credential in the URL
 * and the body, which OpenAPI security schemes cannot name; sign-out works
 * without a session.
 */
const PUBLIC_OPERATIONS = [
  'GET /api/bootstrap',
  'GET /api/calendar/{token}',
  'GET /api/server-info',
  'GET /auth/oidc/callback',
  'GET /auth/oidc/login',
  'POST /api/paging/acknowledge',
  'POST /auth/login',
  'POST /auth/logout',
];

test('exactly the operations the contract calls public may be called without credentials', async () => {
  const anonymous = operationsOf(await generated)
    .filter(({ operation }) => {
      const security = operation.security;
      assert.ok(security !== undefined, 'every operation states its own security');
      return security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0);
    })
    .map(({ where }) => where)
    .sort();
  assert.deepEqual(anonymous, PUBLIC_OPERATIONS);
});

test('every operation that checks credentials documents 401', async () => {
  for (const { where, operation } of operationsOf(await generated)) {
    const security = operation.security ?? [];
    const required = security.length > 0 && security.every((item) => Object.keys(item).length > 0);
    if (required) assert.ok(operation.responses['401'], `${where} takes credentials but documents no 401`);
  }
});

test('every error answer is the one documented Error schema', async () => {
  const document = await generated;
  const error = document.components?.schemas?.Error as { required?: string[] } | undefined;
  assert.deepEqual(error?.required, ['error'], 'components.schemas.Error is {"error": string}');
  for (const { where, operation } of operationsOf(document)) {
    for (const [status, response] of Object.entries(operation.responses)) {
      if (Number(status) < 400) continue;
      assert.deepEqual(
        Object.keys(response.content ?? {}),
        ['application/json'],
        `${where} ${status} is JSON`,
      );
      assert.deepEqual(
        response.content!['application/json']!.schema,
        { $ref: '#/components/schemas/Error' },
        `${where} ${status} refers to the Error schema`,
      );
    }
  }
});

test("every answer says what it means, not the generator's placeholder", async () => {
  for (const { where, operation } of operationsOf(await generated)) {
    for (const [status, response] of Object.entries(operation.responses)) {
      const description = (response as { description?: string }).description;
      assert.ok(description && description !== 'Default Response', `${where} ${status}: ${description}`);
    }
  }
});

test('answers without a body (204, 304, redirects) are documented without content', async () => {
  for (const { where, operation } of operationsOf(await generated)) {
    for (const [status, response] of Object.entries(operation.responses)) {
      if (status === '204' || status === '304' || /^30[1278]$/.test(status)) {
        assert.equal(response.content, undefined, `${where} ${status} has no body`);
      }
    }
  }
});

test('every operation documents at least one success', async () => {
  for (const { where, operation } of operationsOf(await generated)) {
    const statuses = Object.keys(operation.responses);
    assert.ok(
      statuses.some((status) => /^[23]/.test(status)),
      `${where} documents only ${statuses.join(', ')}`,
    );
  }
});

test('every path parameter of a template is declared, and only those', async () => {
  for (const { path, where, operation } of operationsOf(await generated)) {
    const inTemplate = [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).sort();
    const declared = (operation.parameters ?? [])
      .filter((parameter) => parameter.in === 'path')
      .map((parameter) => {
        assert.equal(parameter.required, true, `${where}: path parameter ${parameter.name} is required`);
        return parameter.name;
      })
      .sort();
    assert.deepEqual(declared, inTemplate, where);
  }
});

test('every schema in the document compiles as JSON Schema 2020-12', async () => {
  const document = await generated;
  const validator = answerValidator(document);
  for (const { where, operation } of operationsOf(document)) {
    for (const [status, response] of Object.entries(operation.responses)) {
      for (const type of Object.keys(response.content ?? {})) {
        assert.doesNotThrow(() => validator.schemaFor(where, status, type), `${where} ${status} ${type}`);
      }
    }
  }
});

test('every operation that validates its input documents 400, one a body can be sent to 413 and 415, and one with an id in its path 404', async () => {
  for (const { where, operation } of operationsOf(await generated)) {
    const parameters = operation.parameters ?? [];
    const validates = parameters.length > 0 || operation.requestBody !== undefined;
    if (validates) assert.ok(operation.responses['400'], `${where} validates input but documents no 400`);
    // A POST without a body of its own (an acknowledge) still parses one sent to it.
    if (operation.requestBody !== undefined || /^(POST|PUT|PATCH|DELETE) /i.test(where)) {
      for (const status of ['413', '415']) {
        assert.ok(operation.responses[status], `${where} takes a body but documents no ${status}`);
      }
    }
    const idInPath = parameters.some(
      (parameter) =>
        parameter.in === 'path' && (parameter.schema as { 'x-terdut-id'?: boolean })['x-terdut-id'],
    );
    if (idInPath)
      assert.ok(operation.responses['404'], `${where} has an id in its path but documents no 404`);
  }
});

test('path parameters are snake_case, like every other name on the wire (api-contract.md)', async () => {
  for (const { where, operation } of operationsOf(await generated)) {
    for (const parameter of operation.parameters ?? []) {
      assert.match(parameter.name, /^[a-z][a-z0-9_]*$/, `${where}: parameter ${parameter.name}`);
    }
  }
});

test('the webhook documents the 408 of a large notification whose body arrives too slowly', async () => {
  const webhook = operationsOf(await generated).find(
    ({ where }) => where === 'POST /api/webhook/alertmanager',
  );
  assert.ok(webhook?.operation.responses['408']);
});

test('a path parameter that is not an id says what goes in it', async () => {
  for (const { where, operation } of operationsOf(await generated)) {
    for (const parameter of operation.parameters ?? []) {
      const schema = parameter.schema as { 'x-terdut-id'?: boolean };
      if (parameter.in !== 'path' || schema['x-terdut-id']) continue;
      assert.ok(parameter.description, `${where}: path parameter ${parameter.name} has no description`);
    }
  }
});
