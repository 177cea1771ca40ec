import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { WorkersUnavailableError } from '@akd-ts/directory';
import { startPool, workerScript, workersUnavailable } from '../src/worker-pool.js';

test('workerScript finds a worker module beside its caller, and says why it cannot', () => {
  const here = new URL('../src/worker-pool.ts', import.meta.url).href;
  const found = workerScript(here, 'audit-verify-worker');
  assert.ok(found instanceof URL);
  assert.match(found.pathname, /src\/audit-verify-worker\.ts$/);
  assert.match(String(workerScript(undefined, 'tree-worker')), /no URL of its own/);
  assert.match(String(workerScript('', 'tree-worker')), /no URL of its own/);
  assert.match(String(workerScript('not a url', 'tree-worker')), /cannot resolve tree-worker/);
  assert.match(
    String(workerScript('https://example.com/lib/index.js', 'tree-worker')),
    /https:\/\/example\.com\/lib\/tree-worker\.js is not a file/,
  );
  assert.match(
    String(workerScript(here, 'no-such-worker')),
    /no worker script at .*no-such-worker\.ts/,
  );
});

test('startPool passes a reason through, and its probe tells a module that loads from one that answers wrong', async () => {
  assert.equal(startPool('why not', {}), 'why not');
  const dir = mkdtempSync(join(tmpdir(), 'akd-pool-'));
  try {
    const wrong = join(dir, 'wrong.mjs');
    writeFileSync(wrong, 'export const probe = () => 42;\n');
    const started = startPool(pathToFileURL(wrong), { minThreads: 1, maxThreads: 1 });
    assert.notEqual(typeof started, 'string');
    if (typeof started !== 'string') assert.equal(await started.ready, 'the probe got no answer');
    const right = join(dir, 'right.mjs');
    writeFileSync(right, 'export const probe = () => true;\n');
    const good = startPool(pathToFileURL(right), { minThreads: 1, maxThreads: 1 });
    if (typeof good === 'string') assert.fail(good);
    assert.equal(await good.ready, undefined);
    await good.pool.destroy();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('workersUnavailable throws where workers were demanded, else warns once per pool', () => {
  assert.throws(
    () => workersUnavailable('test pool', 'no reason at all', true),
    (e: unknown) =>
      e instanceof WorkersUnavailableError &&
      e.pool === 'test pool' &&
      e.reason === 'no reason at all' &&
      /test pool worker threads are unavailable: no reason at all/.test(e.message),
  );
  const warned: string[] = [];
  const original = process.emitWarning;
  process.emitWarning = ((message: string) =>
    void warned.push(message)) as typeof process.emitWarning;
  try {
    workersUnavailable('another test pool', 'first', false);
    workersUnavailable('another test pool', 'second', false);
  } finally {
    process.emitWarning = original;
  }
  assert.deepEqual(warned, [
    'another test pool runs on the calling thread: its worker threads are unavailable (first)',
  ]);
});
