// The packed store's index of tree nodes on its own: labels found by their bytes in the
// slabs, one at a time and in batches, replaced entries handed back, growth, and compaction's
// moves applied only to the records still pointed at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeLabel } from '@akd-ts/core';
import { ByteWriter, writeRecord } from '@akd-ts/storage';
import { leafRecord } from '@akd-ts/storage/conformance';
import { NodeTable } from '../src/node-table.js';
import { Slabs } from '../src/slabs.js';

function leafLabel(i: number, len = 256): NodeLabel {
  const val = new Uint8Array(32);
  new DataView(val.buffer).setUint32(0, i * 2654435761);
  val[31] = i & 0xff;
  return new NodeLabel(val, len);
}

function bytesOf(label: NodeLabel, value: number): Uint8Array {
  const w = new ByteWriter();
  writeRecord(w, leafRecord(label, 1n, value));
  return w.done();
}

function table() {
  const slabs = new Slabs(1 << 20, (record, location) => nodes.move(record, location));
  const nodes: NodeTable = new NodeTable(slabs);
  const put = (label: NodeLabel, value: number) => {
    const bytes = bytesOf(label, value);
    const location = slabs.append(bytes);
    return { location, old: nodes.put(bytes, location) };
  };
  return { slabs, nodes, put };
}

test('a node is found by its label; writing it again hands back the old location', () => {
  const { nodes, put } = table();
  const first = put(leafLabel(1), 1);
  assert.equal(first.old, -1);
  assert.equal(nodes.find(leafLabel(1)), first.location);
  assert.equal(nodes.find(leafLabel(2)), undefined);
  // the same 32 bytes with another length is another label
  assert.equal(nodes.find(leafLabel(1, 255)), undefined);
  const second = put(leafLabel(1), 2);
  assert.equal(second.old, first.location);
  assert.equal(nodes.find(leafLabel(1)), second.location);
  assert.equal(nodes.size, 1);
});

test('a batch of labels in the codec form is found in passes: locations, -1 for none', () => {
  const { nodes, put } = table();
  const at = new Map<number, number>();
  for (let i = 0; i < 100; i++) at.set(i, put(leafLabel(i), i).location);
  const asked = new ByteWriter();
  for (const i of [5, 500, 0, 99, 5]) asked.label(leafLabel(i));
  assert.deepEqual(
    [...nodes.findAll(asked.written())],
    [at.get(5), -1, at.get(0), at.get(99), at.get(5)],
  );
  assert.deepEqual([...nodes.findAll(new Uint8Array(0))], []);
});

test('the table grows past its first 4,096 slots and finds every node after', () => {
  const { nodes, put } = table();
  const at: number[] = [];
  for (let i = 0; i < 10_000; i++) at.push(put(leafLabel(i), i).location);
  assert.equal(nodes.size, 10_000);
  for (let i = 0; i < 10_000; i += 37) assert.equal(nodes.find(leafLabel(i)), at[i]);
  assert.equal([...nodes.locations()].length, 10_000);
  assert.deepEqual(new Set(nodes.locations()), new Set(at));
});

test("compaction's move appends a record again only while the table points at it", () => {
  const { slabs, nodes, put } = table();
  const a = put(leafLabel(1), 1);
  const b = put(leafLabel(2), 2);
  // a dead copy of node 1 (its location is no longer the table's): not moved
  const newer = put(leafLabel(1), 3);
  const appended = slabs.appended;
  nodes.move(slabs.bytesAt(a.location), a.location);
  assert.equal(slabs.appended, appended);
  assert.equal(nodes.find(leafLabel(1)), newer.location);
  // node 2's record is live: moved, and found at its new place with the same bytes
  nodes.move(slabs.bytesAt(b.location), b.location);
  const moved = nodes.find(leafLabel(2))!;
  assert.notEqual(moved, b.location);
  assert.deepEqual(slabs.bytesAt(moved), bytesOf(leafLabel(2), 2));
});
