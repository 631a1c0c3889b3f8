import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPglite } from './database.ts';
import { isUniqueViolation } from './unique-violation.ts';

test('a PGlite error keeps its code and message but not the statement or its parameters', async () => {
  const db = await openPglite(undefined);
  try {
    await db.exec('CREATE TABLE secrets (value text UNIQUE)');
    await db.query('INSERT INTO secrets (value) VALUES ($1)', ['hunter2-note-and-email@example.com']);
    const error = await db
      .query('INSERT INTO secrets (value) VALUES ($1)', ['hunter2-note-and-email@example.com'])
      .then(
        () => assert.fail('expected a unique violation'),
        (caught: unknown) => caught as Error & { code?: string },
      );
    assert.ok(isUniqueViolation(error), 'services still recognise the violation by its code');
    assert.match(error.message, /duplicate key value violates unique constraint/);
    const everything = JSON.stringify(error, Object.getOwnPropertyNames(error));
    assert.doesNotMatch(everything, /hunter2/);
    assert.doesNotMatch(everything, /INSERT INTO/);
  } finally {
    await db.close();
  }
});
