// The byte gathering under `akd audit verify`'s HTTP reads: chunks of any size, across the
// 256 KiB blocks they are copied into, come back as one array of exactly their bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ByteBlocks } from '../src/commands/bounded-get.js';

test('chunks of any size come back whole and in order, in an array of their own', () => {
  const block = 256 * 1024;
  for (const sizes of [
    [],
    [0],
    [1],
    [block],
    [block, 1],
    [block - 1, 2, block + 3],
    [3 * block + 7],
  ]) {
    const expected = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
    for (let i = 0; i < expected.length; i++) expected[i] = (i * 131 + (i >> 8)) & 0xff;
    const blocks = new ByteBlocks();
    let at = 0;
    for (const n of sizes) {
      blocks.add(expected.subarray(at, at + n));
      at += n;
      assert.equal(blocks.length, at);
    }
    const joined = blocks.join();
    assert.deepEqual(joined, expected, sizes.join(','));
    assert.equal(joined.byteOffset, 0);
    assert.equal(joined.buffer.byteLength, expected.length, 'not a view into a larger buffer');
  }
  // a byte at a time, across a block boundary
  const blocks = new ByteBlocks();
  for (let i = 0; i < block + 10; i++) blocks.add(new Uint8Array([i & 0xff]));
  const joined = blocks.join();
  assert.equal(joined.length, block + 10);
  assert.ok(joined.every((b, i) => b === (i & 0xff)));
});
