// `akd monitor` against a real directory through a hostile server, and `akd verify evidence`
// on what it caught: growth, an owner's unexpected value, a rollback, usage errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { akd, tempDir } from './helpers.js';
import { hostileServer, realServer } from '../../client/test/support/hostile.js';

function evidencePath(stderr: string): string {
  const m = /\(evidence: (.+?)\)/.exec(stderr);
  assert.ok(m, `no evidence file named in ${stderr}`);
  return m[1]!;
}

test('akd monitor: first use, growth, an unexpected value, and its evidence checked offline', async () => {
  const real = await realServer();
  const tmp = tempDir();
  const state = join(tmp.dir, 'state.json');
  const base = ['monitor', '--server', real.url, '--label', 'alice', '--state', state];
  const first = await akd([...base, '--expect', 'alice-key-2']);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /head: epoch 3 root [0-9a-f]{64}, first head \(first-use\)/);
  assert.match(first.stdout, /new: alice version 2 \(epoch 2\) = "alice-key-2"/);
  assert.ok(existsSync(state));
  await real.publish([['alice', 'alice-key-3']]);
  const second = await akd([...base, '--expect', 'alice-key-3']);
  assert.equal(second.code, 0, second.stderr);
  assert.match(second.stdout, /grew from epoch 3 \(append-only\)/);
  assert.match(second.stdout, /new: alice version 3 \(epoch 4\) = "alice-key-3"/);
  // someone else changes alice's key
  await real.publish([['alice', 'mallory-key']]);
  const third = await akd([
    ...base,
    '--expect',
    'alice-key-3',
    '--count',
    '2',
    '--interval',
    '1ms',
  ]);
  assert.equal(third.code, 1);
  assert.match(third.stderr, /^error: CLIENT_UNEXPECTED_CHANGE: /);
  const file = evidencePath(third.stderr);
  const verdict = await akd(['verify', 'evidence', file]);
  assert.equal(verdict.code, 0, verdict.stdout + verdict.stderr);
  assert.match(verdict.stdout, /proven: unexpected-change/);
  // the same document claiming the new value was registered proves nothing
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  doc.label.registered.push('6d616c6c6f72792d6b6579');
  writeFileSync(join(tmp.dir, 'forged.json'), JSON.stringify(doc));
  const forged = await akd(['verify', 'evidence', join(tmp.dir, 'forged.json'), '--json']);
  assert.equal(forged.code, 1);
  assert.equal(JSON.parse(forged.stdout.split('\n')[0]!).proven, false);
  // the value the owner expects no longer: the current value differs without evidence
  const contact = await akd(['monitor', '--server', real.url, '--label', 'bob', '--state', state]);
  assert.equal(contact.code, 0, contact.stderr);
  assert.match(contact.stdout, /label: bob at version 1\n/);
  tmp.cleanup();
  await real.close();
});

test('akd monitor: a rollback fails with evidence that verifies, tampered evidence does not', async () => {
  const real = await realServer();
  const hostile = await hostileServer(real.url);
  const tmp = tempDir();
  const state = join(tmp.dir, 'state.json');
  const old = await (await fetch(`${real.url}/v1/epoch`)).json();
  await real.publish([['alice', 'alice-key-3']]);
  const base = ['monitor', '--server', hostile.url, '--label', 'bob', '--state', state];
  assert.equal((await akd(base)).code, 0);
  hostile.rule = (path) => (path === '/v1/epoch' ? { body: old } : undefined);
  const out = await akd(base);
  assert.equal(out.code, 1);
  assert.match(out.stderr, /^error: CLIENT_ROLLBACK: /);
  const file = evidencePath(out.stderr);
  assert.equal((await akd(['verify', 'evidence', file])).code, 0);
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  doc.heads[1].epoch = '9';
  writeFileSync(file, JSON.stringify(doc));
  assert.equal((await akd(['verify', 'evidence', file])).code, 1);
  writeFileSync(file, '{"format":"x"}');
  assert.equal((await akd(['verify', 'evidence', file])).code, 2);
  assert.equal((await akd(['verify', 'evidence', join(tmp.dir, 'missing.json')])).code, 2);
  tmp.cleanup();
  await hostile.close();
  await real.close();
});

test('akd monitor: usage errors exit 2', async () => {
  const base = ['monitor', '--server', 'http://127.0.0.1:1', '--label', 'a', '--state', '/tmp/x'];
  const key = 'aa'.repeat(32);
  for (const extra of [
    ['--quorum', '1'],
    ['--witness-key', 'zz'],
    ['--witness-key', key],
    ['--witness-key', key, '--namespace', 'n', '--quorum', '2'],
    ['--witness-key', key, '--namespace', 'n', '--max-age', 'soon'],
    ['--trust', '3:abc'],
    ['--count', '0'],
  ]) {
    assert.equal((await akd([...base, ...extra])).code, 2, extra.join(' '));
  }
  assert.equal(
    (await akd(['monitor', '--server', 'ftp://x', '--label', 'a', '--state', 's'])).code,
    2,
  );
});
