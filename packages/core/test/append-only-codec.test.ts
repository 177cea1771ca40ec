import { test } from 'node:test';
import assert from 'node:assert/strict';
import { create, toBinary } from '@bufbuild/protobuf';
import {
  AkdError,
  NodeLabel,
  decodeSingleAppendOnlyProof,
  encodeSingleAppendOnlyProof,
  encodeSingleAppendOnlyProofInPlace,
  toHex,
  type AzksElement,
  type SingleAppendOnlyProof,
} from '@akd-ts/core';
import * as pb from '../src/proto/gen/types_pb.js';
import { azksElementToMessage } from '../src/proto/to-message.js';
import { readSingleAppendOnlyProof } from '../src/proto/append-only-step.js';
import { packStep, type PackedStep } from '../src/verify/append-only-step.js';

let seed = 7;
const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
const bytes = (n: number) => Uint8Array.from({ length: n }, () => next() >>> 24);

/** Labels of every shape: the root, short prefixes (trailing zero bytes), leaves. */
function element(): AzksElement {
  const len = [0, 1, 7, 8, 9, 100, 255, 256][next() % 8]!;
  return { label: new NodeLabel(bytes(32), 256).getPrefix(len), value: bytes(32) };
}

function proof(): SingleAppendOnlyProof {
  return {
    inserted: Array.from({ length: next() % 40 }, element),
    unchangedNodes: Array.from({ length: next() % 40 }, element),
  };
}

function generic(p: SingleAppendOnlyProof): Uint8Array {
  return toBinary(
    pb.SingleAppendOnlyProofSchema,
    create(pb.SingleAppendOnlyProofSchema, {
      inserted: p.inserted.map(azksElementToMessage),
      unchangedNodes: p.unchangedNodes.map(azksElementToMessage),
    }),
  );
}

function sameStep(a: PackedStep, b: PackedStep): void {
  assert.equal(a.unchanged, b.unchanged);
  assert.equal(a.set.count, b.set.count);
  assert.equal(toHex(a.set.labels), toHex(b.set.labels));
  assert.deepEqual([...a.set.lens], [...b.set.lens]);
  assert.equal(toHex(a.set.values), toHex(b.set.values));
}

test('the direct writer gives the generic encoder’s bytes, and the reader what the decoder reads', () => {
  for (let i = 0; i < 300; i++) {
    const p = proof();
    const data = encodeSingleAppendOnlyProof(p);
    assert.equal(toHex(data), toHex(generic(p)));
    sameStep(readSingleAppendOnlyProof(data)!, packStep(decodeSingleAppendOnlyProof(data)));
  }
  assert.throws(
    () =>
      encodeSingleAppendOnlyProof({
        inserted: [{ ...element(), value: bytes(31) }],
        unchangedNodes: [],
      }),
    { name: 'RangeError', message: 'AzksElement.value must be 32 bytes' },
  );
});

test('the reader takes only the canonical layout and agrees with the decoder on anything it takes', () => {
  const data = encodeSingleAppendOnlyProof({
    inserted: [element(), element()],
    unchangedNodes: [element()],
  });
  // layouts the decoder accepts that the reader leaves to it
  const unusual = [
    Uint8Array.from([...data, 0x18, 0x01]), // an unknown field
    Uint8Array.from([0x0a, 0x28, 0x12, 0x20, ...bytes(32), 0x0a, 0x04, 0x0a, 0x00, 0x10, 0x00]), // value before label
  ];
  for (const u of unusual) {
    assert.equal(readSingleAppendOnlyProof(u), undefined);
    decodeSingleAppendOnlyProof(u);
  }
  // random corruption: whenever the reader takes the bytes, the decoder reads the same
  let taken = 0;
  for (let i = 0; i < 3000; i++) {
    const bad = data.slice();
    for (let k = 0; k <= i % 3; k++) bad[next() % bad.length] = next() >>> 24;
    const cut = i % 7 === 0 ? bad.subarray(0, next() % bad.length) : bad;
    const fast = readSingleAppendOnlyProof(cut);
    if (fast === undefined) continue;
    taken++;
    let slow: PackedStep | AkdError;
    try {
      slow = packStep(decodeSingleAppendOnlyProof(cut));
    } catch (e) {
      slow = e as AkdError;
    }
    assert.ok(
      !(slow instanceof Error),
      `the reader took bytes the decoder refuses: ${String(slow)}`,
    );
    sameStep(fast, slow);
  }
  assert.ok(taken > 100, `some corrupted encodings stay canonical (${taken})`);
});

test('elements read where they lie give the generic encoder’s bytes', () => {
  for (let i = 0; i < 100; i++) {
    const p = proof();
    // scatter every element over slots of shared arrays, as an insertion's arena holds them
    const all = [...p.inserted, ...p.unchangedNodes];
    const slots = all.length * 3 + 5;
    const labels = new Uint8Array(32 * slots);
    const lens = new Uint16Array(slots);
    const hashes = new Uint8Array(32 * slots);
    const order = Int32Array.from({ length: slots }, (_, k) => k).sort(() => (next() & 1) - 0.5);
    const place = (list: AzksElement[], from: number) =>
      Int32Array.from(list, (e, k) => {
        const at = order[from + k]!;
        labels.set(e.label.val, 32 * at);
        lens[at] = e.label.len;
        hashes.set(e.value, 32 * at);
        return at;
      });
    const leaves = place(p.inserted, 0);
    const roots = place(p.unchangedNodes, p.inserted.length);
    // the unchanged values in a list of their own, in order
    const values = new Uint8Array(32 * roots.length);
    p.unchangedNodes.forEach((e, k) => values.set(e.value, 32 * k));
    const data = encodeSingleAppendOnlyProofInPlace(
      { count: leaves.length, labels, lens, labelAt: leaves, values: hashes, valueAt: leaves },
      { count: roots.length, labels, lens, labelAt: roots, values },
    );
    assert.equal(toHex(data), toHex(generic(p)));
  }
});

test('elements in place at positions outside their arrays are RangeErrors', () => {
  const labels = new Uint8Array(64);
  const lens = new Uint16Array(2);
  const values = new Uint8Array(64);
  const none = { count: 0, labels, lens, labelAt: new Int32Array(0), values };
  const one = (labelAt: number, valueAt?: number) => ({
    count: 1,
    labels,
    lens,
    labelAt: Int32Array.of(labelAt),
    values,
    valueAt: valueAt === undefined ? undefined : Int32Array.of(valueAt),
  });
  assert.equal(encodeSingleAppendOnlyProofInPlace(one(1, 1), none).length > 0, true);
  assert.throws(() => encodeSingleAppendOnlyProofInPlace(one(2), none), /no label at position 2/);
  assert.throws(() => encodeSingleAppendOnlyProofInPlace(none, one(-1)), /no label at position -1/);
  assert.throws(() => encodeSingleAppendOnlyProofInPlace(one(0, 2), none), /no 32-byte value/);
  assert.throws(
    () => encodeSingleAppendOnlyProofInPlace({ ...none, count: 1 }, none),
    /needs as many positions/,
  );
});
