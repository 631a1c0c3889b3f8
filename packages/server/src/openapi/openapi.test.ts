import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { compareOpenApi } from './compare.ts';
import { generatedApiDocs } from './generate.ts';

const committedPath = new URL('../../../../docs/openapi.json', import.meta.url);
// Building the app once is enough for every test here.
const generatedDocs = generatedApiDocs();
const regenerate =
  'run `npm run generate:openapi` and commit docs/openapi.json and docs/api.md with the change';

test('the committed docs/openapi.json and docs/api.md are what the code generates', async () => {
  const generated = await generatedDocs;
  const committed = JSON.parse(readFileSync(committedPath, 'utf8')) as Record<string, unknown>;
  const changes = compareOpenApi(committed, JSON.parse(generated['docs/openapi.json']!));
  const report = [
    ...changes.breaking.map((change) => `  BREAKING ${change}`),
    ...changes.additive.map((change) => `  additive ${change}`),
  ];
  assert.equal(
    report.length,
    0,
    `the HTTP contract changed (${changes.breaking.length} breaking, ${changes.additive.length} additive):\n` +
      `${report.join('\n')}\n${regenerate}; a breaking change also needs a note in the pull request`,
  );
  const markdown = readFileSync(new URL('../../../../docs/api.md', import.meta.url), 'utf8');
  assert.equal(markdown, generated['docs/api.md'], `docs/api.md is out of date; ${regenerate}`);
});

test('a removed field, a changed type and a path gone are breaking; a new optional field is additive', () => {
  const document = (paths: Record<string, unknown>) => ({ openapi: '3.1.0', paths });
  const ok = (properties: Record<string, unknown>, required: string[]) => ({
    get: {
      responses: {
        200: { content: { 'application/json': { schema: { type: 'object', properties, required } } } },
      },
    },
  });
  const before = document({
    '/api/things': ok({ id: { type: 'integer' }, name: { type: 'string' } }, ['id', 'name']),
    '/api/gone': ok({}, []),
  });
  const after = document({
    '/api/things': ok({ id: { type: 'string' }, note: { type: 'string' } }, ['id']),
  });
  const changes = compareOpenApi(before, after);
  assert.deepEqual(changes.breaking.sort(), [
    'GET /api/gone: operation removed',
    'GET /api/things response 200.id: type integer became string',
    'GET /api/things response 200.name: field removed',
  ]);
  assert.deepEqual(changes.additive, ['GET /api/things response 200.note: field added']);
});

test('a request field that becomes required is breaking; a new optional one is not', () => {
  const post = (properties: Record<string, unknown>, required: string[]) => ({
    openapi: '3.1.0',
    paths: {
      '/api/things': {
        post: {
          requestBody: {
            content: { 'application/json': { schema: { type: 'object', properties, required } } },
          },
          responses: {},
        },
      },
    },
  });
  const before = post({ name: { type: 'string' } }, ['name']);
  assert.deepEqual(
    compareOpenApi(before, post({ name: { type: 'string' }, tag: { type: 'string' } }, ['name'])),
    {
      breaking: [],
      additive: ['POST /api/things request body.tag: field added'],
    },
  );
  assert.deepEqual(
    compareOpenApi(before, post({ name: { type: 'string' }, tag: { type: 'string' } }, ['name', 'tag']))
      .breaking,
    ['POST /api/things request body.tag: required field added'],
  );
});

test('a field removed from a shared schema is breaking in every operation that refers to it', () => {
  const withError = (properties: Record<string, unknown>) => ({
    openapi: '3.1.0',
    components: { schemas: { Error: { type: 'object', properties, required: Object.keys(properties) } } },
    paths: {
      '/api/things': {
        get: {
          responses: {
            404: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
          },
        },
      },
    },
  });
  const changes = compareOpenApi(
    withError({ error: { type: 'string' }, code: { type: 'string' } }),
    withError({ error: { type: 'string' } }),
  );
  assert.deepEqual(changes.breaking, ['GET /api/things response 404.code: field removed']);
});

test('a changed operationId is breaking: generated clients name their functions after it', () => {
  const named = (operationId: string) => ({
    openapi: '3.1.0',
    paths: { '/api/things': { get: { operationId, responses: {} } } },
  });
  assert.deepEqual(compareOpenApi(named('getThings'), named('getThings')).breaking, []);
  assert.deepEqual(compareOpenApi(named('getThings'), named('listThings')).breaking, [
    'GET /api/things: operationId getThings became listThings',
  ]);
});

test('narrowing the values a response field may take is breaking', () => {
  const roles = (values: string[]) => ({
    openapi: '3.1.0',
    paths: {
      '/api/me': {
        get: {
          responses: {
            200: {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: {
                      role: { anyOf: values.map((value) => ({ type: 'string', enum: [value] })) },
                    },
                    required: ['role'],
                  },
                },
              },
            },
          },
        },
      },
    },
  });
  assert.deepEqual(compareOpenApi(roles(['admin', 'member']), roles(['admin', 'member'])).breaking, []);
  assert.equal(compareOpenApi(roles(['admin', 'member']), roles(['admin'])).breaking.length, 1);
});

test('the document tells clients that hour and day statistics are in TERDUT_TIMEZONE', async () => {
  const document = JSON.parse((await generatedDocs)['docs/openapi.json']!);
  const paths = document.paths as Record<string, { get: { summary: string } }>;
  assert.match(paths['/api/stats/alerts/by-hour']!.get.summary, /TERDUT_TIMEZONE/);
  assert.match(paths['/api/stats/alerts/by-day']!.get.summary, /TERDUT_TIMEZONE/);
});
