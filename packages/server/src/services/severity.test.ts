import { test } from 'node:test';
import assert from 'node:assert/strict';
import { raisesSeverity, severityRank } from './severity.ts';

test('severities order critical > high/error > warning > info/low > none, case-insensitively', () => {
  const ordered = ['none', 'info', 'warning', 'error', 'critical'];
  for (let i = 1; i < ordered.length; i++) {
    assert.ok(severityRank(ordered[i]!) > severityRank(ordered[i - 1]!), `${ordered[i]} > ${ordered[i - 1]}`);
  }
  assert.equal(severityRank('HIGH'), severityRank('error'));
  assert.equal(severityRank('low'), severityRank('info'));
  assert.equal(severityRank('page'), severityRank('critical'));
});

test('the high-water mark is only raised, never lowered; an unknown value counts only when there is none', () => {
  const none = { severity: null, severity_rank: 0 };
  const warning = { severity: 'warning', severity_rank: severityRank('warning') };
  assert.equal(raisesSeverity(none, 'sev-custom'), true);
  assert.equal(raisesSeverity(warning, 'critical'), true);
  assert.equal(raisesSeverity(warning, 'info'), false);
  assert.equal(raisesSeverity(warning, 'warning'), false);
  assert.equal(raisesSeverity(warning, 'sev-custom'), false);
});
