import { test } from 'node:test';
import assert from 'node:assert/strict';
import { incidentTitle, TITLE_LIMIT } from './incident-title.ts';

const group = (
  groupLabels: Record<string, string>,
  commonAnnotations: Record<string, string> = {},
): Parameters<typeof incidentTitle>[0] => ({
  groupKey: '{}:{}',
  groupLabels,
  commonLabels: { alertname: groupLabels.alertname ?? 'HighCPU' },
  commonAnnotations,
  alerts: [],
});

test('a title names the alert and its grouping labels, or says the common summary, as it was', () => {
  assert.equal(incidentTitle(group({ alertname: 'HighCPU', team: 'db' })), 'HighCPU (team=db)');
  assert.equal(incidentTitle(group({ alertname: 'HighCPU' })), 'HighCPU');
  assert.equal(
    incidentTitle(group({ alertname: 'HighCPU' }, { summary: '  Disk is full ' })),
    'Disk is full',
  );
});

test("under group_by: ['...'], labels of kilobytes make a title of at most 200 characters that still says which alert", () => {
  const title = incidentTitle(
    group({
      alertname: 'E2ELongLabels',
      instance: 'db-3:9100',
      query: 'q'.repeat(2_000),
      trace: 'f'.repeat(2_000),
      pod: 'api-7d9f',
    }),
  );
  assert.ok(title.length <= TITLE_LIMIT, `${title.length} characters`);
  assert.ok(title.startsWith('E2ELongLabels (instance=db-3:9100, query=qqq'), title);
  // A long value is cut where it stands, so the labels after it are still named.
  assert.match(title, /query=q{39}…, trace=f{39}…, pod=api-7d9f\)$/);

  const many = incidentTitle(
    group(
      Object.fromEntries([
        ['alertname', 'Many'],
        ...Array.from({ length: 40 }, (_, i) => [`label${i}`, `v${i}`]),
      ]),
    ),
  );
  assert.equal(Array.from(many).length, TITLE_LIMIT);
  assert.ok(many.startsWith('Many (label0=v0, label1=v1'), many);
  assert.ok(many.endsWith('…'), many);
});

test('a long summary is cut at 200 characters without splitting a character in two', () => {
  const title = incidentTitle(group({ alertname: 'X' }, { summary: '🔥'.repeat(300) }));
  assert.equal(Array.from(title).length, TITLE_LIMIT);
  assert.equal(title, `${'🔥'.repeat(TITLE_LIMIT - 1)}…`);
  assert.ok(title.isWellFormed());
});
