import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendAll } from '@akd-ts/core';

test('appendAll appends in order, however many items: more than a call takes as arguments', () => {
  const items = Array.from({ length: 1_000_000 }, (_, i) => i);
  const out = appendAll([-2, -1], items);
  assert.equal(out.length, 1_000_002);
  assert.deepEqual(out.slice(0, 4), [-2, -1, 0, 1]);
  assert.equal(out[out.length - 1], 999_999);
  // any iterable, and the array it was given
  const target: string[] = [];
  assert.equal(appendAll(target, new Set(['a', 'b'])), target);
  assert.deepEqual(target, ['a', 'b']);
});
