/**
 * A cache that keeps tree nodes as their codec bytes (`CacheOptions.compactNodes`): every read
 * gives back the record that went in, field for field; the memory bound counts the bytes; and
 * other records stay objects.
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeLabel, utf8 } from '@akd-ts/core';
import {
  ByteWriter,
  MemoryDatabase,
  NodeType,
  StorageManager,
  TimedCache,
  nodeKey,
  writeRecord,
  type TreeNode,
  type TreeNodeRecord,
  type ValueStateRecord,
} from '@akd-ts/storage';
import { assertRecordEqual, leafRecord } from '@akd-ts/storage/conformance';

function label(fill: number, len: number): NodeLabel {
  return new NodeLabel(new Uint8Array(32).fill(fill), 256).getPrefix(len);
}

function interior(at: NodeLabel, epoch: bigint, fill: number, withChildren: boolean): TreeNode {
  return {
    label: at,
    lastEpoch: epoch,
    minDescendantEpoch: 1n,
    parent: NodeLabel.root(),
    nodeType: NodeType.Interior,
    leftChild: withChildren ? label(0x00, 256) : undefined,
    rightChild: withChildren ? label(0xff, 256) : undefined,
    leftEpoch: withChildren ? epoch : undefined,
    // a child none of whose versions is visible at the node's epoch
    rightEpoch: undefined,
    hash: new Uint8Array(32).fill(fill),
  };
}

/** Records of every shape a tree holds: leaves, interiors with a previous copy, the root. */
function shapes(): TreeNodeRecord[] {
  const at = label(0xa5, 13);
  const root = NodeLabel.root();
  return [
    leafRecord(label(0x11, 256), 3n, 7),
    {
      kind: 'treeNode',
      label: at,
      latest: interior(at, 5n, 1, true),
      previous: interior(at, 2n, 2, false),
    },
    {
      kind: 'treeNode',
      label: root,
      latest: { ...interior(root, 9n, 3, true), nodeType: NodeType.Root, parent: root },
      previous: undefined,
    },
  ];
}

function encodedLength(record: TreeNodeRecord): number {
  const w = new ByteWriter(64);
  writeRecord(w, record);
  return w.written().length;
}

test('a compact cache gives back every node record as it went in; other records as they are', () => {
  const cache = new TimedCache({ compactNodes: true });
  const records = shapes();
  for (const r of records) cache.put(r.label.key, r);
  const state: ValueStateRecord = {
    kind: 'valueState',
    username: utf8('alice'),
    epoch: 1n,
    version: 1n,
    label: label(0x22, 256),
    value: utf8('key'),
  };
  cache.put('state', state);
  cache.put('0101', { kind: 'azks', latestEpoch: 9n, numNodes: 5n });
  assert.equal(cache.nodeCount, 3);
  for (const r of records) {
    const got = cache.get(r.label.key)!;
    if (r.label.len >= 12) assert.notEqual(got, r, 'a node is decoded, not the object put in');
    else assert.equal(got, r, 'a node near the root (a label under 12 bits) stays an object');
    assertRecordEqual(got, r);
  }
  // the previous version decodes when first read, once
  const withPrevious = cache.get(records[1]!.label.key) as TreeNodeRecord;
  assert.ok(Object.getOwnPropertyDescriptor(withPrevious, 'previous')?.get);
  assert.equal(withPrevious.previous, withPrevious.previous);
  const many = cache.getNodes(records.map((r) => r.label));
  many.forEach((got, i) => assertRecordEqual(got!, records[i]!));
  assert.equal(cache.get('state'), state, 'a value state is kept as an object');
  assert.deepEqual(cache.get('0101'), { kind: 'azks', latestEpoch: 9n, numNodes: 5n });
  cache.forget(records[0]!.label.key);
  assert.equal(cache.get(records[0]!.label.key), undefined);
  assert.equal(cache.nodeCount, 2);
  cache.flush();
  assert.equal(cache.nodeCount, 0);
  assert.equal(cache.get(records[1]!.label.key), undefined);
  // after a flush, new entries go to a new slab and read back as well
  cache.put(records[1]!.label.key, records[1]!);
  assertRecordEqual(cache.get(records[1]!.label.key)!, records[1]!);
});

test('entries over many slabs read back, and the bound counts their bytes and evicts the oldest', () => {
  const leaves = Array.from({ length: 3_000 }, (_, i) => {
    const val = new Uint8Array(32);
    new DataView(val.buffer).setUint32(0, i);
    const l = new NodeLabel(val, 256);
    const record = leafRecord(l, 1n + BigInt(i % 5), i & 0xff);
    return { ...record, previous: { ...record.latest, lastEpoch: 0n } };
  });
  // about 300 bytes each: 3,000 fill several 256 KiB slabs
  const unbounded = new TimedCache({ compactNodes: true });
  for (const r of leaves) unbounded.put(r.label.key, r);
  for (const r of leaves) assertRecordEqual(unbounded.get(r.label.key)!, r);
  assert.equal(unbounded.retainedBytes, 0, 'sizes are counted only under a bound');

  const entry = 34 + encodedLength(leaves[0]!) + 16;
  const limit = 100 * entry;
  const bounded = new TimedCache({ compactNodes: true, memoryLimitBytes: limit });
  bounded.put(leaves[0]!.label.key, leaves[0]!);
  assert.equal(bounded.retainedBytes, entry, 'an entry counts its key, its bytes and 16');
  for (const r of leaves.slice(1)) bounded.put(r.label.key, r);
  assert.ok(bounded.retainedBytes <= limit, `retained ${bounded.retainedBytes}`);
  assert.ok(bounded.size >= 90, `${bounded.size} entries`);
  assert.equal(bounded.get(leaves[0]!.label.key), undefined, 'the oldest went first');
  assertRecordEqual(bounded.get(leaves[2_999]!.label.key)!, leaves[2_999]!);
});

test('a storage manager with a compact cache reads the same records, from the cache once read', async () => {
  const db = new MemoryDatabase();
  const records = shapes();
  await db.batchSet([...records, { kind: 'azks', latestEpoch: 9n, numNodes: 3n }]);
  const sm = new StorageManager(db, { cache: { compactNodes: true } });
  for (const r of records) assertRecordEqual(await sm.get(nodeKey(r.label)), r);
  const reads = sm.metrics.dbGets;
  const again = await sm.batchGet(records.map((r) => nodeKey(r.label)));
  assert.equal(sm.metrics.dbGets, reads, 'the second read came from the cache');
  assert.equal(again.length, records.length);
  for (const r of records) assertRecordEqual(sm.peekNode(r.label)!, r);
});
