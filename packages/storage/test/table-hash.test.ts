// The packed store's table hashing: every byte of a label (and its length) changes its hash,
// and a grown table keeps each entry at a slot its hash leads to.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bytesHash, labelHash, regrown } from '../src/table-hash.js';

test('a label hash reads all 32 bytes and the length, from the offset given', () => {
  const val = new Uint8Array(40);
  val.set(new Uint8Array(32).fill(7), 4);
  const h = labelHash(val, 4, 256);
  assert.equal(h | 0, h, 'a signed 32-bit value');
  assert.equal(labelHash(val.slice(4), 0, 256), h);
  assert.notEqual(labelHash(val, 4, 255), h);
  for (const i of [4, 20, 35]) {
    const other = val.slice();
    other[i]! ^= 1;
    assert.notEqual(labelHash(other, 4, 256), h, `byte ${i - 4}`);
  }
  // bytes past the label count for nothing
  const past = val.slice();
  past[36] = 9;
  assert.equal(labelHash(past, 4, 256), h);
});

test('a bytes hash reads every byte and the length', () => {
  const h = bytesHash(new TextEncoder().encode('alice'));
  assert.equal(h | 0, h);
  assert.notEqual(bytesHash(new TextEncoder().encode('alicf')), h);
  assert.notEqual(bytesHash(new TextEncoder().encode('alice\0')), h);
  assert.notEqual(bytesHash(new Uint8Array(0)), bytesHash(new Uint8Array(1)));
});

test('a regrown table is twice the size and holds every entry where its hash leads', () => {
  const table = new Float64Array(8);
  const hashes = new Int32Array(8);
  // three entries whose hashes collide in 8 slots (slot 1) but not all in 16
  const entries = [
    [5, 1],
    [6, 9],
    [7, -7],
  ] as const;
  let slot = 1;
  for (const [entry, h] of entries) {
    table[slot] = entry;
    hashes[slot] = h;
    slot++;
  }
  const [bigger, biggerHashes] = regrown(table, hashes);
  assert.equal(bigger.length, 16);
  for (const [entry, h] of entries) {
    // probing from the hash's home slot finds the entry before an empty slot
    let s = h & 15;
    while (bigger[s] !== entry) {
      assert.notEqual(bigger[s], 0, `entry ${entry} lost`);
      s = (s + 1) & 15;
    }
    assert.equal(biggerHashes[s], h);
  }
  assert.equal(bigger.filter((e) => e !== 0).length, 3);
});
