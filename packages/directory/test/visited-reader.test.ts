/**
 * The reader a lookup's walks use after its preload (tree/visited-reader.ts): nodes the
 * preload saw come from its map, anything else from the reader underneath, and the proofs are
 * the same as those built on the storage manager itself.
 */

import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NodeLabel,
  encodeMembershipProof,
  encodeNonMembershipProof,
  type AzksElement,
} from '@akd-ts/core';
import { MemoryDatabase, StorageManager, nodeKey, type TreeNodeRecord } from '@akd-ts/storage';
import { VisitedReader, type VisitedNodes } from '../src/tree/visited-reader.js';
import { randomLeaves, treeOf } from './support/seeded-tree.js';

async function tree(elements: AzksElement[]) {
  const built = await treeOf(elements);
  built.storage.flushCache();
  return built;
}

/** Counts the peeks that reach the storage manager. */
function countingPeeks(storage: StorageManager): { count: number } {
  const seen = { count: 0 };
  const peekNode = storage.peekNode.bind(storage);
  storage.peekNode = (label: NodeLabel) => {
    seen.count++;
    return peekNode(label);
  };
  return seen;
}

test("after a lookup's preload, its walks find every node in the preload's map", async () => {
  const elements = randomLeaves(500, 11);
  const { storage, azks } = await tree(elements);
  const present = elements[123]!.label;
  const absent = randomLeaves(1, 99)[0]!.label;
  const visited: VisitedNodes = new Map();
  await azks.preloadFor(storage, [present, absent], 1n, {
    levels: undefined,
    maxBatchSize: 1000,
    visited,
  });
  assert.ok(visited.size > 2, 'the walk recorded the nodes it saw');
  for (const [key, record] of visited) assert.equal(record.label.key, key);

  const reader = new VisitedReader(storage, visited);
  const peeks = countingPeeks(storage);
  const member = await azks.membershipProof(reader, present, 1n);
  const nonMember = await azks.nonMembershipProof(reader, absent, 1n);
  assert.equal(peeks.count, 0, 'no node was looked for in the cache');

  // the same proofs as on the storage manager, cold
  storage.flushCache();
  assert.deepEqual(
    encodeMembershipProof(member),
    encodeMembershipProof(await azks.membershipProof(storage, present, 1n)),
  );
  assert.deepEqual(
    encodeNonMembershipProof(nonMember),
    encodeNonMembershipProof(await azks.nonMembershipProof(storage, absent, 1n)),
  );
});

test('a node the preload did not see is asked of the reader underneath', async () => {
  const elements = randomLeaves(40, 5);
  const { storage, azks } = await tree(elements);
  const target = elements[7]!.label;
  const other = elements[30]!.label;
  const reader = new VisitedReader(storage, new Map());
  assert.equal(reader.mayHoldNodes(), false, 'empty map, empty cache');
  await azks.preloadFor(storage, [other], 1n, { levels: undefined, maxBatchSize: 1000 });
  assert.equal(reader.mayHoldNodes(), true);
  const peeks = countingPeeks(storage);
  const proof = await azks.membershipProof(reader, target, 1n);
  assert.ok(peeks.count > 0);
  assert.deepEqual(proof.label, target);

  // a record in the map wins over the cache's, and the map's own entries count
  const fake: TreeNodeRecord = { ...(await storage.get(nodeKey(target))) };
  const mapped = new VisitedReader(storage, new Map([[target.key, fake]]));
  assert.equal(mapped.peekNode(target), fake);
  assert.deepEqual(mapped.peekNodes([target, other]), [fake, storage.peekNode(other)]);
  assert.equal(
    new VisitedReader(
      new StorageManager(new MemoryDatabase()),
      new Map([[target.key, fake]]),
    ).mayHoldNodes(),
    true,
  );
});

test('everything but peeks goes to the reader underneath', async () => {
  const elements = randomLeaves(20, 8);
  const { storage } = await tree(elements);
  const reader = new VisitedReader(storage, new Map());
  const key = nodeKey(elements[0]!.label);
  const record = await reader.get(key);
  assert.deepEqual(record, await storage.get(key));
  assert.deepEqual(await reader.batchGet([key]), [record]);
  assert.equal(reader.getFromCacheOnly(key), storage.getFromCacheOnly(key));
  storage.flushCache();
  const read = await reader.readNodes([elements[0]!.label, elements[1]!.label]);
  assert.equal(read.length, 2);
  assert.equal(storage.peekNode(elements[0]!.label), undefined, 'readNodes caches nothing');
  reader.cacheNodes(read.filter((r) => r !== undefined));
  assert.notEqual(storage.peekNode(elements[0]!.label), undefined);
  assert.equal(reader.hasCache(), true);
  assert.equal(reader.readsNodeBytes(), storage.readsNodeBytes());
  await assert.rejects(reader.readNodeBytes(new Uint8Array(34)), /bytes/);
});

test('without a cache, the preload still fills the map and the walks read nothing more', async () => {
  const elements = randomLeaves(300, 17);
  const { storage, azks } = await tree(elements);
  const bare = new StorageManager(storage.db, { cache: false });
  const target = elements[99]!.label;
  assert.equal(
    await azks.preloadFor(bare, [target], 1n, { levels: undefined, maxBatchSize: 1000 }),
    0,
    'nothing to warm without a map',
  );
  const visited: VisitedNodes = new Map();
  const count = await azks.preloadFor(bare, [target], 1n, {
    levels: undefined,
    maxBatchSize: 1000,
    visited,
  });
  assert.ok(count > 2 && visited.size === count);
  const before = { ...bare.metrics };
  const proof = await azks.membershipProof(new VisitedReader(bare, visited), target, 1n);
  assert.deepEqual(bare.metrics, before, 'no read after the preload');
  assert.deepEqual(
    encodeMembershipProof(proof),
    encodeMembershipProof(await azks.membershipProof(bare, target, 1n)),
  );
  const reads = bare.metrics.dbBatchGets - before.dbBatchGets;
  assert.ok(reads > 0, 'the manager alone reads from the database');
  assert.equal(bare.metrics.dbBatchKeys - before.dbBatchKeys, reads, 'node by node');
});
