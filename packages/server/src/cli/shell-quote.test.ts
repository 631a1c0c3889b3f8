import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { shellQuote } from './shell-quote.ts';

test('a quoted word reads back as itself in sh, spaces and quotes included', () => {
  for (const word of [
    '/tmp/new user/terdut/.terdut-kube/kubeconfig',
    "/tmp/it's here/kubeconfig",
    '/tmp/$HOME `x` "y"/kubeconfig',
    '/plain/path/kubeconfig',
  ]) {
    const line = `export KUBECONFIG=${shellQuote(word)}; printf %s "$KUBECONFIG"`;
    assert.equal(execFileSync('sh', ['-c', line], { encoding: 'utf8' }), word);
  }
});

test('a plain path stays as it is', () => {
  assert.equal(shellQuote('/work/main/.terdut-kube/kubeconfig'), '/work/main/.terdut-kube/kubeconfig');
});
