import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonShape } from './json-shape.ts';

test('the shape counts objects, arrays and their members, not brackets or commas inside strings', () => {
  assert.deepEqual(jsonShape('{"a":1}'), { depth: 1, containers: 1, members: 1, widest: 1 });
  assert.deepEqual(jsonShape('{"a":[{"b":[]}],"c":{},"d":[1,2,3]}'), {
    depth: 4,
    containers: 6,
    members: 10,
    widest: 3,
  });
  assert.deepEqual(jsonShape('{"a":"[[[{{{,,,"}'), { depth: 1, containers: 1, members: 1, widest: 1 });
  // An escaped quote does not end a string; an escaped backslash before a quote does.
  assert.deepEqual(jsonShape('{"a":"x\\"[[,","b":"y\\\\","c":[[1]]}'), {
    depth: 3,
    containers: 3,
    members: 5,
    widest: 3,
  });
  assert.deepEqual(jsonShape('"unterminated [[[,'), { depth: 0, containers: 0, members: 0, widest: 0 });
});

test('four million nested arrays are counted without recursion', () => {
  const depth = 4_000_000;
  assert.deepEqual(jsonShape(`${'['.repeat(depth)}${']'.repeat(depth)}`), {
    depth,
    containers: depth,
    members: depth,
    widest: 1,
  });
});
