/**
 * docs/operations.md's metrics table and alert rules name the metrics the
 * server and the operator really export: a rule on a metric that does not
 * exist never fires (PromQL finds no series and says nothing), which is the
 * silence these rules are there to break, and a metric the table leaves out
 * is one nobody alerts on.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../peers/child-processes.ts';
import { createTestPglite } from '../support/databases.ts';
import { startTestApp, type TestApp } from '../support/app.ts';
import { createOperatorMetrics } from '../../packages/operator/src/runtime/metrics.ts';

const operations = readFileSync(join(repoRoot, 'docs', 'operations.md'), 'utf8');
let server: TestApp;

before(async () => {
  server = await startTestApp(await createTestPglite());
});
after(async () => {
  const db = server?.db;
  await server?.close();
  await db?.close();
});

/** The `terdut_*` metric families an exposition declares (`# TYPE name type`), with their types. */
function declaredFamilies(exposition: string): Map<string, string> {
  const families = new Map<string, string>();
  for (const [, name, type] of exposition.matchAll(/^# TYPE (terdut_\w+) (\w+)$/gm))
    families.set(name!, type!);
  return families;
}

async function exportedFamilies(): Promise<Map<string, string>> {
  const response = await server.request({ method: 'GET', url: '/metrics' });
  assert.equal(response.status, 200);
  const families = declaredFamilies(String(response.body));
  for (const [name, type] of declaredFamilies(await createOperatorMetrics().registry.metrics())) {
    families.set(name, type);
  }
  return families;
}

/** The family a series name belongs to: a histogram's `_bucket`, `_sum` and `_count` are its own. */
function familyOf(series: string, families: Map<string, string>): string | undefined {
  if (families.has(series)) return series;
  const base = series.replace(/_(bucket|sum|count)$/, '');
  return families.get(base) === 'histogram' ? base : undefined;
}

test('every alert rule in docs/operations.md queries metrics that terdut exports', async () => {
  const families = await exportedFamilies();
  const block = /Alerts worth having[\s\S]*?```yaml\n([\s\S]*?)```/.exec(operations);
  assert.ok(block, 'docs/operations.md has no alert rules block after "Alerts worth having"');
  // The block is Prometheus' rule file shape, one `- alert:` with its `expr:` on the next line.
  const rules = [...block[1]!.matchAll(/^\s*- alert: (\S+).*\n\s*expr: (.+)$/gm)].map(([, alert, expr]) => ({
    alert: alert!,
    expr: expr!.trim(),
  }));
  const declared = [...block[1]!.matchAll(/- alert:/g)].length;
  assert.equal(rules.length, declared, 'every rule has its expr on the line after its name');
  assert.ok(rules.length >= 8, `only ${rules.length} rules read`);
  const unknown: string[] = [];
  for (const rule of rules) {
    assert.ok(rule.alert && rule.expr, `a rule without alert or expr: ${JSON.stringify(rule)}`);
    const depth = [...rule.expr].reduce(
      (open, c) => (open < 0 ? open : open + (c === '(' ? 1 : c === ')' ? -1 : 0)),
      0,
    );
    assert.equal(depth, 0, `${rule.alert}: unbalanced parentheses in ${rule.expr}`);
    for (const [series] of rule.expr.matchAll(/\bterdut_\w+/g)) {
      if (!familyOf(series, families)) unknown.push(`${rule.alert}: ${series}`);
    }
  }
  assert.deepEqual(unknown, [], 'rules on metrics nobody exports never fire');
  // The paging rules are there: an incident manager that cannot page must say so elsewhere.
  for (const metric of ['terdut_pages_failed_total', 'terdut_paging_outbox_oldest_age_seconds']) {
    assert.ok(
      rules.some((rule) => rule.expr.includes(metric)),
      `no alert rule watches ${metric}`,
    );
  }
});

test("docs/operations.md's metrics table lists every metric the server and the operator export, and nothing else", async () => {
  const families = await exportedFamilies();
  const table = operations.slice(
    operations.indexOf('## Metrics and alerts to set on terdut itself'),
    operations.indexOf('Alerts worth having'),
  );
  const documented = new Set([...table.matchAll(/`(terdut_\w+)/g)].map(([, name]) => name!));
  const missing = [...families.keys()].filter((name) => !documented.has(name)).sort();
  const invented = [...documented].filter((name) => !familyOf(name, families)).sort();
  assert.deepEqual(missing, [], 'exported but not documented');
  assert.deepEqual(invented, [], 'documented but not exported');
});
