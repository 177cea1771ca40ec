import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LARGE_EPOCH_VERSIONS, releaseAfterLargeEpoch } from '../src/release-memory.js';

test('a large epoch collects garbage where the process exposes gc, a small one never does', () => {
  const holder = globalThis as { gc?: () => void };
  const exposed = holder.gc;
  let calls = 0;
  try {
    holder.gc = () => void calls++;
    assert.equal(releaseAfterLargeEpoch(LARGE_EPOCH_VERSIONS - 1), false);
    assert.equal(calls, 0);
    assert.equal(releaseAfterLargeEpoch(LARGE_EPOCH_VERSIONS), true);
    assert.equal(calls, 1);
    delete holder.gc;
    assert.equal(releaseAfterLargeEpoch(10 * LARGE_EPOCH_VERSIONS), false);
    assert.equal(calls, 1);
  } finally {
    if (exposed === undefined) delete holder.gc;
    else holder.gc = exposed;
  }
});
