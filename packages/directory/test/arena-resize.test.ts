import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NONE, NodeArena } from '../src/tree/arena/arena.js';
import { walkCapacity } from '../src/tree/arena/load.js';

/** An arena of `capacity` slots and `alts` alternatives, every byte of every field set. */
function filled(capacity: number, alts: number): NodeArena {
  const a = NodeArena.create({ capacity, altCapacity: alts, labelValueLength: 32 });
  let x = 1;
  for (const field of [
    a.labels,
    a.lens,
    a.hashes,
    a.lastEpoch,
    a.minEpoch,
    a.types,
    a.left,
    a.right,
    a.parent,
    a.labelValues,
    a.hasLabelValue,
    a.storedLatest,
    a.storedLatestEpoch,
    a.storedPrevious,
    a.storedPreviousEpoch,
    a.written,
    a.changed,
    a.alt,
    a.altEpoch,
    a.altType,
    a.altHashes,
  ]) {
    for (let i = 0; i < field.length; i++) field[i] = (x++ % 250) + 1;
  }
  return a;
}

test('a resized arena holds the slots and alternatives in use, and the rest as a new one', () => {
  const from = filled(10, 4);
  const to = from.resized({ capacity: 16, altCapacity: 6, labelValueLength: 32 }, 7, 3);
  const fresh = NodeArena.create({ capacity: 16, altCapacity: 6, labelValueLength: 32 });
  for (let s = 0; s < 16; s++) {
    const src = s < 7 ? from : fresh;
    const slot = (f: NodeArena) => [
      [...f.labels.subarray(32 * s, 32 * s + 32)],
      [...f.hashes.subarray(32 * s, 32 * s + 32)],
      [...f.labelValues.subarray(32 * s, 32 * s + 32)],
      ...(['lens', 'lastEpoch', 'minEpoch', 'types', 'left', 'right', 'parent'] as const).map(
        (k) => f[k][s],
      ),
      ...(['hasLabelValue', 'storedLatest', 'storedLatestEpoch', 'storedPrevious'] as const).map(
        (k) => f[k][s],
      ),
      ...(['storedPreviousEpoch', 'written', 'changed', 'alt'] as const).map((k) => f[k][s]),
    ];
    assert.deepEqual(slot(to), slot(src), `slot ${s}`);
  }
  for (let i = 0; i < 6; i++) {
    const src = i < 3 ? from : fresh;
    const alt = (f: NodeArena) => [
      f.altEpoch[i],
      f.altType[i],
      [...f.altHashes.subarray(32 * i, 32 * i + 32)],
    ];
    assert.deepEqual(alt(to), alt(src), `alternative ${i}`);
  }
  assert.equal(to.left[15], NONE);
  // a smaller arena takes as many slots as fit, and by default all of them are in use
  const small = from.resized({ capacity: 4, altCapacity: 2, labelValueLength: 32 });
  assert.deepEqual([...small.lastEpoch], [...from.lastEpoch.subarray(0, 4)]);
  assert.deepEqual([...small.altHashes], [...from.altHashes.subarray(0, 64)]);
});

test("a walk's arena is sized from the tree's nodes, to what the walk reads and the insertion's room", () => {
  // without the tree's size: two slots an element
  assert.equal(walkCapacity(1000, 50), 2000 + 64 + 50);
  // never more than the tree holds, however many elements
  assert.equal(walkCapacity(100_000, 10, 99), 100 + 64 + 10);
  assert.equal(walkCapacity(0, 0, 0), 1 + 64);
  // what the walks measured (load.ts): within the estimate (a walk past it copies its
  // arena), and not twice over it
  const measured: [number, number, number][] = [
    [200_000, 500_000, 577_437],
    [100_000, 500_000, 428_995],
    [100_000, 2_000_000, 773_417],
  ];
  for (const [elements, leaves, read] of measured) {
    const estimate = walkCapacity(elements, 0, 2 * leaves) - 64;
    assert.ok(estimate >= read && estimate < 2 * read, `${elements}: ${estimate} for ${read}`);
  }
  // more elements read more nodes, and a larger tree too
  assert.ok(walkCapacity(10, 0, 1e6) < walkCapacity(20, 0, 1e6));
  assert.ok(walkCapacity(10, 0, 1e6) < walkCapacity(10, 0, 2e6));
});
