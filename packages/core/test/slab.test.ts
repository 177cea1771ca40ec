import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blake3 as nobleBlake3 } from '@noble/hashes/blake3.js';
import { toHex, utf8 } from '../src/bytes.js';
import { alloc32, carvedCopy, carvedUtf8 } from '../src/slab.js';
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

test('carved copies and UTF-8 keep their own bytes, and large ones get arrays of their own', () => {
  const texts = Array.from({ length: 2000 }, (_, i) => `user-${i}-${'é€😀'.repeat(i % 5)}`);
  const carved = texts.map((t) => carvedUtf8(t));
  // every array holds exactly what utf8 gives, after all were carved (no overlap)
  texts.forEach((t, i) => assert.deepEqual(carved[i], utf8(t)));
  const buffers = new Set(carved.map((v) => v.buffer));
  assert.ok(buffers.size > 1 && buffers.size < 100, `${buffers.size} shared buffers`);
  assert.deepEqual(carvedUtf8(''), new Uint8Array(0));
  // lone surrogates become U+FFFD, as with utf8
  assert.deepEqual(carvedUtf8('a\ud800'), utf8('a\ud800'));

  const sources = Array.from({ length: 500 }, (_, i) =>
    Uint8Array.from({ length: i % 40 }, (_, j) => i + j),
  );
  const copies = sources.map((b) => carvedCopy(b));
  sources.forEach((b, i) => {
    assert.deepEqual(copies[i], b);
    assert.notEqual(copies[i]!.buffer, b.buffer);
  });
  copies[3]!.fill(0xee);
  assert.deepEqual(copies[4], sources[4], 'writing one copy leaves its neighbours');

  const long = 'x'.repeat(400); // up to 1,200 bytes: more than a carving holds
  assert.equal(carvedUtf8(long).buffer.byteLength, 400);
  const big = new Uint8Array(2000).fill(7);
  const bigCopy = carvedCopy(big);
  assert.equal(bigCopy.buffer.byteLength, 2000);
  assert.deepEqual(bigCopy, big);
});
