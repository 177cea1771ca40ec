import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  AZKS_KEY,
  InstrumentedDatabase,
  MemoryDatabase,
  StorageManager,
  alignNodes,
  readNodeRecords,
  type NodeRecordBatch,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { leafRecord } from '@akd-ts/storage/conformance';
import { withoutAlignedReads } from '../../../test/support/aligned-reads.js';

const label = (fill: number) => new NodeLabel(new Uint8Array(32).fill(fill), 256);

/** A store holding leaves 1..3 (and the AZKS record), and its records by fill. */
async function store(): Promise<{ db: MemoryDatabase; rec: TreeNodeRecord[] }> {
  const db = new MemoryDatabase();
  const rec = [1, 2, 3].map((f) => leafRecord(label(f), 1n));
  await db.batchSet([{ kind: 'azks', latestEpoch: 1n, numNodes: 3n }, ...rec]);
  return { db, rec };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AkdError);
    return e.code;
  }
  assert.fail('expected a failure');
}

test('aligned node reads give each label its record, undefined where none, with or without the driver', async () => {
  const { db, rec } = await store();
  // fresh label objects: the records are found by value, duplicates and misses in place
  const asked = [label(2), label(9), label(1), label(2), label(3)];
  const want = [rec[1], undefined, rec[0], rec[1], rec[2]];
  assert.deepEqual(await db.batchGetNodes(asked), want);
  assert.deepEqual(await readNodeRecords(db, asked), want);
  const plain = withoutAlignedReads(db);
  assert.equal(plain.batchGetNodes, undefined);
  assert.deepEqual(await readNodeRecords(plain, asked), want);
  assert.deepEqual(await readNodeRecords(db, []), []);
  // records of other kinds never answer a label
  assert.deepEqual(alignNodes([label(1)], [{ kind: 'azks', latestEpoch: 1n, numNodes: 3n }]), [
    undefined,
  ]);
  await db.close();
  assert.equal(await codeOf(db.batchGetNodes([label(1)])), 'STORAGE_CONNECTION');
});

test('the instrumented store counts aligned reads as batched reads, with their round trips', async () => {
  const { db, rec } = await store();
  for (const inner of [db, withoutAlignedReads(db)]) {
    const remote = new InstrumentedDatabase(inner, { maxKeysPerRead: 2 });
    const got = await remote.batchGetNodes([label(3), label(1), label(7)]);
    assert.deepEqual(got, [rec[2], rec[0], undefined]);
    assert.equal(remote.stats.batchReads, 1);
    assert.equal(remote.stats.batchKeys, 3);
    assert.equal(remote.stats.roundTrips, 2);
    assert.equal(remote.stats.inFlight, 0);
  }
});

test('peekNodes takes the log, the batches and the cache in that order; readNodes asks only the database', async () => {
  const { db, rec } = await store();
  const storage = new StorageManager(db);
  const labels = [label(1), label(2), label(3), label(4)];
  assert.deepEqual(storage.peekNodes(labels), [undefined, undefined, undefined, undefined]);
  // a read caches nothing by itself: the caller keeps what it wants
  assert.deepEqual(await storage.readNodes(labels), [rec[0], rec[1], rec[2], undefined]);
  assert.equal(storage.cacheSize, 0);
  assert.equal(storage.metrics.dbBatchGets, 1);
  assert.equal(storage.metrics.dbBatchKeys, 4);
  storage.cacheNodes([rec[0]!, rec[2]!]);
  assert.deepEqual(storage.peekNodes(labels), [rec[0], undefined, rec[2], undefined]);
  assert.equal(storage.metrics.cacheHits, 0, 'a peek is not a counted hit');

  const tx = storage.beginTransaction();
  assert.deepEqual(tx.peekNodes(labels), [rec[0], undefined, rec[2], undefined]);
  const logged = leafRecord(label(1), 2n);
  tx.set(logged);
  const batched = leafRecord(label(2), 2n);
  const batch: NodeRecordBatch = {
    size: 1,
    get: (l) => (l.key === batched.label.key ? batched : undefined),
    delete: () => false,
    records: () => [batched],
  };
  tx.logNodeBatch(batch);
  assert.deepEqual(tx.peekNodes(labels), [logged, batched, rec[2], undefined]);
  // the transaction's read goes to committed data, and its cache is the storage manager's
  assert.deepEqual(await tx.readNodes([label(1), label(2)]), [rec[0], rec[1]]);
  tx.cacheNodes([rec[1]!]);
  assert.deepEqual(storage.peekNodes([label(2)]), [rec[1]]);
  await tx.rollback();
  assert.equal(await codeOf(tx.readNodes([label(1)])), 'STORAGE_TRANSACTION');
});

test('without a cache, peekNodes finds nothing and cacheNodes keeps nothing', async () => {
  const { db, rec } = await store();
  const storage = new StorageManager(db, { cache: false });
  storage.cacheNodes(rec);
  assert.deepEqual(storage.peekNodes([label(1), label(2)]), [undefined, undefined]);
  assert.deepEqual(await storage.readNodes([label(2)]), [rec[1]]);
  assert.equal((await storage.batchGet([AZKS_KEY])).length, 1);
});
