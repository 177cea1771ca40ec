import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import { toHex } from '../src/bytes.js';
import { alloc32 } from '../src/slab.js';
import { blake3 } from '../src/config/hash.js';
import { NodeLabel } from '../src/node-label.js';

test('alloc32 hands out distinct zero-filled 32-byte views, across many shared buffers', () => {
  const views = Array.from({ length: 300 }, () => alloc32());
  views.forEach((v, i) => {
    assert.equal(v.length, 32);
    assert.ok(v.every((b) => b === 0));
    v.fill(i & 0xff);
  });
  // writing each view touched no other one
  views.forEach((v, i) => assert.ok(v.every((b) => b === (i & 0xff))));
  const buffers = new Set(views.map((v) => v.buffer));
  assert.ok(buffers.size >= 3, 'the views span several buffers');
  for (const buffer of buffers) assert.equal(buffer.byteLength, 4096);
});

test('hashes and label prefixes carved from shared buffers keep their own bytes', () => {
  const inputs = Array.from({ length: 400 }, (_, i) =>
    Uint8Array.from({ length: 1 + (i % 90) }, (_, j) => i * 7 + j),
  );
  const ours = inputs.map((x) => blake3(x));
  inputs.forEach((x, i) => assert.equal(toHex(ours[i]!), toHex(nobleBlake3(x))));
  const full = new NodeLabel(new Uint8Array(32).fill(0xff), 256);
  const prefixes = Array.from({ length: 200 }, (_, i) => full.getPrefix(1 + i));
  prefixes.forEach((p, i) => {
    assert.equal(p.len, 1 + i);
    assert.ok(p.isPrefixOf(full));
    assert.equal(p.val.length, 32);
  });
  // a view's bytes are reachable only through its offset, as every user of .buffer must do
  const h = ours[399]!;
  assert.equal(toHex(new Uint8Array(h.buffer, h.byteOffset, h.byteLength)), toHex(h));
});
