import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fromHex, toHex } from '../src/bytes.js';

/** The hex of `bytes` the slow way, one byte at a time. */
const reference = (bytes: Uint8Array) =>
  Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');

test('toHex gives lowercase hex of every byte value and length, and fromHex reverses it', () => {
  const all = Uint8Array.from({ length: 256 }, (_, i) => i);
  assert.equal(toHex(all), reference(all));
  assert.equal(toHex(new Uint8Array(0)), '');
  for (const n of [1, 2, 31, 32, 33, 36, 4095, 4096, 4097, 10_000]) {
    const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 97 + n) & 0xff);
    const hex = toHex(bytes);
    assert.equal(hex, reference(bytes), `${n} bytes`);
    assert.deepEqual(fromHex(hex), bytes);
  }
});

test('toHex of a view reads only the view, and earlier results stay as they were', () => {
  const bytes = Uint8Array.from({ length: 64 }, (_, i) => i);
  const first = toHex(bytes.subarray(10, 14));
  const large = toHex(new Uint8Array(9000).fill(0xab)); // past the reused scratch buffer
  const second = toHex(bytes.subarray(60));
  assert.equal(first, '0a0b0c0d');
  assert.equal(second, '3c3d3e3f');
  assert.equal(large, 'ab'.repeat(9000));
  assert.equal(toHex(bytes.subarray(10, 14)), first);
});
