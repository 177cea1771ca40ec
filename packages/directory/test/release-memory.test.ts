import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LARGE_EPOCH_VERSIONS, releaseAfterLargeEpoch } from '../src/release-memory.js';

test('a large epoch collects garbage, after settling, where the process exposes gc; a small one never does', async () => {
  const holder = globalThis as { gc?: () => void };
  const exposed = holder.gc;
  const order: string[] = [];
  const settle = async () => void order.push('settle');
  try {
    holder.gc = () => void order.push('gc');
    assert.equal(await releaseAfterLargeEpoch(LARGE_EPOCH_VERSIONS - 1, settle), false);
    assert.deepEqual(order, []);
    assert.equal(await releaseAfterLargeEpoch(LARGE_EPOCH_VERSIONS, settle), true);
    assert.deepEqual(order, ['settle', 'gc']);
    delete holder.gc;
    assert.equal(await releaseAfterLargeEpoch(10 * LARGE_EPOCH_VERSIONS, settle), false);
    assert.deepEqual(order, ['settle', 'gc']);
  } finally {
    if (exposed === undefined) delete holder.gc;
    else holder.gc = exposed;
  }
});
