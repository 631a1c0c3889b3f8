import { test } from 'node:test';
import assert from 'node:assert/strict';
import { priorityOf } from './messages.ts';

test('ntfy priority follows the severity as the incident ranks it: page is as urgent as critical', () => {
  assert.equal(priorityOf('critical'), 5);
  assert.equal(priorityOf('page'), 5);
  assert.equal(priorityOf('Page'), 5);
  assert.equal(priorityOf('error'), 4);
  assert.equal(priorityOf('high'), 4);
  assert.equal(priorityOf('warning'), 3);
  assert.equal(priorityOf('warn'), 3);
  assert.equal(priorityOf('info'), 2);
  assert.equal(priorityOf('none'), 2);
  assert.equal(priorityOf('whatever'), 2);
  assert.equal(priorityOf(null), 2);
});
