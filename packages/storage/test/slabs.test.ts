// The packed store's slabs on their own: records found by location, slabs dropped once no
// record is left in them, sparse slabs compacted a budget at a time through the owner's
// relocate, and a record larger than a slab in a slab of its own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SLAB_BYTES, SLOT, Slabs, offsetOf } from '../src/slabs.js';

/** Slabs whose owner keeps the live locations in `live` (record's first byte: its id). */
function owned(slabBytes: number) {
  const live = new Map<number, number>();
  const moved: number[] = [];
  const slabs = new Slabs(slabBytes, (record, location) => {
    const id = record[0]!;
    if (live.get(id) !== location) return;
    live.set(id, slabs.append(record));
    moved.push(id);
  });
  const put = (id: number, size: number) => {
    const record = new Uint8Array(size).fill(id);
    const old = live.get(id);
    live.set(id, slabs.append(record));
    if (old !== undefined) slabs.release(old);
  };
  return { slabs, live, moved, put };
}

test('a record is found at its location, as it was written, with its length', () => {
  const { slabs, live, put } = owned(64);
  put(1, 10);
  put(2, 20);
  assert.deepEqual(slabs.bytesAt(live.get(1)!), new Uint8Array(10).fill(1));
  assert.deepEqual(slabs.bytesAt(live.get(2)!), new Uint8Array(20).fill(2));
  // u32 length, then the bytes: the second record starts 4 + 10 bytes in
  assert.equal(offsetOf(live.get(2)!), 14);
  assert.equal(slabs.viewOf(live.get(2)!).getUint32(14), 20);
  assert.equal(slabs.bufferOf(live.get(2)!)[18], 2);
  assert.deepEqual(slabs.usage(), {
    slabs: 1,
    bytes: 64,
    liveBytes: 38,
    toCompact: 0,
    compacted: 0,
  });
  assert.equal(slabs.appended, 38);
});

test('a full slab leaves room to a new one; a slab with no live record left is dropped', () => {
  const { slabs, live, put } = owned(64);
  put(1, 28); // 32 bytes
  put(2, 28); // 32 more: the first slab is full
  put(3, 28); // a second slab
  assert.equal(Math.floor(live.get(3)! / SLOT), 1);
  assert.equal(slabs.usage().slabs, 2);
  put(1, 28);
  put(2, 28); // a third slab; the first holds nothing live now, and is dropped
  assert.equal(Math.floor(live.get(2)! / SLOT), 2);
  assert.equal(slabs.usage().slabs, 2);
  assert.equal(slabs.usage().liveBytes, 96);
  // its number is used again for the next new slab
  put(4, 100);
  assert.equal(Math.floor(live.get(4)! / SLOT), 0);
});

test('a sparse slab is compacted a budget at a time: live records move, dead ones stay behind', () => {
  const { slabs, live, moved, put } = owned(1024);
  for (let id = 1; id <= 16; id++) put(id, 60); // 64 bytes each: one full slab
  put(17, 60); // a second slab
  // three quarters of the first slab are written again: it is under half live
  for (let id = 1; id <= 12; id++) put(id, 60);
  const before = slabs.usage();
  assert.equal(before.toCompact, 1024);
  slabs.compact(64 * 14); // ids 1..14: 1..12 are dead there, 13 and 14 move
  assert.deepEqual(moved, [13, 14]);
  assert.equal(slabs.usage().toCompact, 128);
  slabs.compactAfter(slabs.appended); // at least a MiB: the rest
  assert.deepEqual(moved, [13, 14, 15, 16]);
  const after = slabs.usage();
  assert.equal(after.toCompact, 0);
  assert.equal(after.compacted, 1024);
  assert.equal(after.liveBytes, 17 * 64);
  for (const [id, location] of live) {
    assert.deepEqual(slabs.bytesAt(location), new Uint8Array(60).fill(id));
  }
});

test('a record larger than a slab gets one of its own, dropped when it is replaced', () => {
  const { slabs, live, put } = owned(64);
  put(1, 10);
  put(2, 1000);
  assert.equal(offsetOf(live.get(2)!), 0);
  assert.deepEqual(slabs.usage(), {
    slabs: 2,
    bytes: 64 + 1004,
    liveBytes: 14 + 1004,
    toCompact: 0,
    compacted: 0,
  });
  put(2, 10);
  assert.equal(slabs.usage().bytes, 64);
});

test('a slab is 64 bytes to 64 MiB', () => {
  for (const size of [63, SLAB_BYTES + 1, 100.5, Number.NaN]) {
    assert.throws(() => new Slabs(size, () => {}), RangeError);
  }
  assert.equal(new Slabs(SLAB_BYTES, () => {}).usage().slabs, 0);
});
