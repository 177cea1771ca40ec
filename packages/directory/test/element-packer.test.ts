import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel, compareNodeLabels } from '@akd-ts/core';
import { ElementPacker, packElements } from '../src/tree/arena/elements.js';
import { clusteredLeaves, randomBytes } from './support/differential.js';

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

test('a packer set in any order packs the same bytes as the objects, sorted by label', () => {
  const elements = clusteredLeaves(randomBytes(11), 300, 4);
  const packer = new ElementPacker(elements.length);
  // set from the end, as a publish sets what the engine announced first
  for (let i = elements.length - 1; i >= 0; i--) {
    assert.equal(packer.has(i), false);
    packer.set(i, elements[i]!.label, elements[i]!.value);
    assert.equal(packer.has(i), true);
  }
  const packed = packer.pack();
  const sorted = [...elements].sort((a, b) => compareNodeLabels(a.label, b.label));
  assert.equal(packed.count, elements.length);
  assert.equal(hex(packed.labels), sorted.map((e) => hex(e.label.val)).join(''));
  assert.equal(hex(packed.values), sorted.map((e) => hex(e.value)).join(''));
  const viaObjects = packElements(elements);
  assert.deepEqual([viaObjects.labels, viaObjects.values], [packed.labels, packed.values]);
  // the packer lets its buffers go, and cannot be used again
  assert.throws(() => packer.pack(), /packed already/);
  assert.throws(() => packer.set(0, elements[0]!.label, elements[0]!.value), /packed already/);
});

test('a packer refuses bad indices, bad elements, gaps and duplicates', () => {
  const [a, b] = clusteredLeaves(randomBytes(12), 2, 1);
  const packer = new ElementPacker(2);
  for (const i of [-1, 2, 0.5]) {
    assert.throws(() => packer.set(i, a!.label, a!.value), RangeError);
  }
  const treeError = (f: () => void, message: RegExp) =>
    assert.throws(
      f,
      (e) => e instanceof AkdError && e.code === 'DIRECTORY_TREE' && message.test(e.message),
    );
  treeError(
    () => packer.set(0, new NodeLabel(a!.label.val, 255), a!.value),
    /not a full-length leaf/,
  );
  treeError(() => packer.set(0, a!.label, a!.value.subarray(1)), /value of 31 bytes/);
  assert.equal(packer.has(0), false, 'a refused element is not set');
  packer.set(0, a!.label, a!.value);
  assert.throws(() => packer.set(0, b!.label, b!.value), /set twice/);
  assert.throws(() => packer.pack(), /element 1 of 2 was never set/);

  const twice = new ElementPacker(2);
  twice.set(0, a!.label, a!.value);
  twice.set(1, a!.label, b!.value);
  treeError(() => twice.pack(), new RegExp(`element .*${hex(a!.label.val)}.* appears twice`));
});

test('an empty packer packs nothing', () => {
  const packed = new ElementPacker(0).pack();
  assert.equal(packed.count, 0);
  assert.equal(packed.labels.length, 0);
});
