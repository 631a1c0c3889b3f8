import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readSignedValue, signValue } from './signed-values.ts';

const key = 'a key only this test knows';
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.';

test('a signed value reads back only with the key it was signed with', () => {
  const text = signValue({ incident: 42, action: 'acknowledge' }, key);
  assert.deepEqual(readSignedValue(text, key), { incident: 42, action: 'acknowledge' });
  assert.equal(readSignedValue(text, 'another key'), undefined);
});

// The invariant: any text other than exactly the one issued is refused. Every
// single-character change is tried, including the last character of the
// signature, whose low bits base64url decoders ignore.
test('every one-character change to a signed value is refused', () => {
  const values = [{ a: 'acknowledge', i: 42, u: 7, e: 1_800_000_000 }, { n: 1 }, 'x'];
  for (const value of values) {
    const text = signValue(value, key);
    for (let at = 0; at < text.length; at += 1) {
      for (const replacement of alphabet) {
        if (replacement === text[at]) continue;
        const changed = text.slice(0, at) + replacement + text.slice(at + 1);
        assert.equal(readSignedValue(changed, key), undefined, `accepted ${changed} (position ${at})`);
      }
    }
    assert.equal(readSignedValue(`${text}A`, key), undefined, 'a character appended');
    assert.equal(readSignedValue(text.slice(0, -1), key), undefined, 'a character removed');
  }
});

test('malformed text is refused rather than thrown on', () => {
  for (const text of ['', '.', 'no-dot', '.sig', 'body.', '%%%.%%%']) {
    assert.equal(readSignedValue(text, key), undefined, text);
  }
});
