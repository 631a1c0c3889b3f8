import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesAll, parseMatcher, parseMatcherToSave } from './matchers.ts';

test('the four Alertmanager operators, quoted and bare values', () => {
  const labels = { severity: 'critical', team: 'web' };
  const cases: [string, boolean][] = [
    ['severity=critical', true],
    ['severity="critical"', true],
    ['severity!=critical', false],
    ['severity=~"crit.*"', true],
    ['severity=~"crit"', false], // anchored, as in Alertmanager
    ['severity!~"warning|info"', true],
    ['team = web', true],
    ['missing=""', true], // an absent label matches like the empty string
    ['missing!=""', false],
    ['name="a \\"quoted\\" value"', false],
  ];
  for (const [text, expected] of cases) {
    assert.equal(parseMatcher(text).matches(labels), expected, text);
  }
  assert.equal(parseMatcher('x="a \\"b\\""').value, 'a "b"');
});

test('every matcher must match; none matches everything', () => {
  const matchers = ['severity=critical', 'team!~"db|storage"'].map(parseMatcher);
  assert.equal(matchesAll(matchers, { severity: 'critical', team: 'web' }), true);
  assert.equal(matchesAll(matchers, { severity: 'critical', team: 'db' }), false);
  assert.equal(matchesAll([], {}), true);
});

test('regexes as Alertmanager takes them: backslash escapes kept, (?i) at the start', () => {
  // Both start the real Alertmanager (0.35); terdut refused them with 400.
  const labels = { instance: 'db12.prod', severity: 'CRITICAL' };
  const cases: [string, boolean][] = [
    ['instance=~"db\\d+\\.prod"', true],
    ['instance=~"db\\d+\\.stage"', false],
    ['instance!~".*\\.prod"', false],
    ['severity=~"(?i)critical|high"', true],
    ['severity=~"critical"', false], // case-sensitive without (?i)
    ['severity!~"(?i)crit.*"', false],
  ];
  for (const [text, expected] of cases) {
    assert.equal(parseMatcher(text).matches(labels), expected, text);
  }
  // A backslash before anything but \\, " or n is a backslash, as in Alertmanager.
  assert.equal(parseMatcher('instance=~"db\\d+"').value, 'db\\d+');
  assert.equal(parseMatcher('path="C:\\\\temp"').value, 'C:\\temp');
  assert.equal(parseMatcher('x="a\\nb"').value, 'a\nb');
});

test('"." stops at a newline unless the pattern starts with (?s), as in Alertmanager (Go regexp, ^(?:…)$)', () => {
  const labels = { description: 'disk full\non db-1' };
  assert.equal(parseMatcher('description=~".*"').matches(labels), false);
  assert.equal(parseMatcher('description=~"disk full\\non db-1"').matches(labels), true);
  assert.equal(parseMatcher('description=~"(?s).*db-1"').matches(labels), true);
  assert.equal(parseMatcher('description=~"(?is)DISK.*"').matches(labels), true);
  assert.equal(parseMatcher('description!~".*"').matches(labels), true);
});

test('(?i) inside a regex applies to the rest of its group, every alternative after it too, as in Go', () => {
  const cases: [string, Record<string, string>, boolean][] = [
    ['env=~"db-(?i)PROD"', { env: 'db-prod' }, true],
    ['env=~"db-(?i)PROD"', { env: 'DB-prod' }, false], // before the flag: case counts
    ['env=~"db-(?i)prod|staging"', { env: 'STAGING' }, true], // `|` is outside db-: both sides after the flag
    ['env=~"db-(?i)prod|staging"', { env: 'prod' }, false],
    ['env=~"(a(?i)b)c"', { env: 'aBc' }, true],
    ['env=~"(a(?i)b)c"', { env: 'aBC' }, false], // the flag ends with its group
    ['env=~"x(?i:Y)z"', { env: 'xyz' }, true], // a scoped group, as Go writes it too
    ['env=~"[(?i)]x(?i)Y"', { env: '(y' }, false], // inside a class it is characters
    ['env=~"[(?i)]x(?i)Y"', { env: '(xy' }, true],
    ['env=~"a\\(x\\)(?i)B"', { env: 'a(x)b' }, true], // escaped parens are no group
    ['env=~"a\\(x\\)(?i)B"', { env: 'ax(b' }, false],
  ];
  for (const [text, labels, expected] of cases) {
    assert.equal(parseMatcher(text).matches(labels), expected, `${text} on ${JSON.stringify(labels)}`);
  }
  assert.throws(() => parseMatcher('env=~"a(?U)b"'), /invalid regular expression/);
});

test('a quoted label name may be any UTF-8 name, as Alertmanager 0.27+ takes it', () => {
  const labels = { 'service.name': 'api', 'k8s.namespace.name': 'prod-eu' };
  assert.equal(parseMatcher('"service.name"="api"').matches(labels), true);
  assert.equal(parseMatcher('"k8s.namespace.name"=~"prod-.*"').matches(labels), true);
  assert.equal(parseMatcher('"k8s.namespace.name"!~"prod-.*"').matches(labels), false);
  assert.equal(parseMatcher('"service.name"="api"').name, 'service.name');
  assert.throws(() => parseMatcher('""=x'), /is not a matcher/);
});

test('malformed matchers say what is wrong', () => {
  assert.throws(() => parseMatcher('severity'), /is not a matcher/);
  assert.throws(() => parseMatcher('1abc=x'), /is not a matcher/);
  assert.throws(() => parseMatcher('a=~"("'), /invalid regular expression/);
  assert.throws(() => parseMatcher('a="open'), /no closing quote/);
  assert.throws(() => parseMatcher('a="open\\"'), /no closing quote/);
  assert.throws(() => parseMatcher('a="x"y"'), /text after its closing quote/);
});

test('regex syntax RE2 reads one way and JavaScript another is refused when saved, never silently never matching', () => {
  for (const text of [
    'host=~"[[:alpha:]]+"',
    'host=~"[[:alpha:][:digit:]]+"',
    'host!~"db[[:^digit:]]"',
    'host=~"db\\d+\\z"',
    'host=~"\\Adb"',
    'team=~"\\p{Greek}+"',
  ]) {
    assert.throws(() => parseMatcherToSave(text), /RE2 that terdut reads otherwise/, text);
  }
  assert.equal(parseMatcherToSave('host=~"[A-Za-z]+"').matches({ host: 'abc' }), true);
  assert.equal(parseMatcherToSave('host=~"db\\d+\\.prod"').matches({ host: 'db12.prod' }), true);
  // Read back as stored, a matcher saved before keeps working.
  assert.equal(parseMatcher('host=~"[[:alpha:]]+"').op, '=~');
});
