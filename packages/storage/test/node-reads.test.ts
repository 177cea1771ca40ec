import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  AZKS_KEY,
  ByteReader,
  CHILD_BYTES,
  InstrumentedDatabase,
  MemoryDatabase,
  NODE_FIELD,
  PackedMemoryDatabase,
  RECORD_LATEST,
  StorageManager,
  alignNodes,
  codecLabelCount,
  codecLabels,
  codecLabelBytes,
  recordsOfBytes,
  readWalkNodes,
  foundRecordsAnswer,
  joinedRecordsAnswer,
  nodeRecordBytes,
  nodeBytesLength,
  readNodeRecords,
  readRecord,
  u64Number,
  writeRecord,
  ByteWriter,
  type NodeRecordBatch,
  type NodeRecordBytes,
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

test("the instrumented store counts the wrapped store's own work on this thread, until the read waits", async () => {
  const { db } = await store();
  // a clock that moves only when the store works or waits: what is counted is exact
  let clock = 1_000;
  const busy = Object.assign(Object.create(db) as MemoryDatabase, {
    // 5 ms of work, then a wait of 30 ms the store does not spend working
    batchGet: async () => {
      clock += 5;
      await new Promise<void>((resolve) => setImmediate(resolve));
      clock += 30;
      return [];
    },
  });
  const remote = new InstrumentedDatabase(busy, { now: () => clock });
  await remote.batchGet([AZKS_KEY]);
  assert.equal(clock, 1_035);
  assert.equal(remote.stats.storeMs, 5);
  await remote.batchGet([AZKS_KEY]);
  assert.equal(remote.stats.storeMs, 10);
  remote.resetStats();
  assert.equal(remote.stats.storeMs, 0);
  // without a clock of its own it reads performance.now: some time, never negative
  const real = new InstrumentedDatabase(db);
  await real.batchGet([AZKS_KEY]);
  assert.ok(real.stats.storeMs >= 0);
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

/** One record in the codec's bytes. */
function recordBytes(r: TreeNodeRecord): Uint8Array {
  const w = new ByteWriter(512);
  writeRecord(w, r);
  return w.done();
}

test('node reads in bytes answer what aligned reads answer, through the storage manager and a remote store', async () => {
  const { db, rec } = await store();
  const packed = new PackedMemoryDatabase();
  await packed.batchSet(db.allRecords());
  const labels = [label(2), label(9), label(1), label(2), label(3)];
  const want = [rec[1], undefined, rec[0], rec[1], rec[2]];
  assert.deepEqual(recordsOfBytes(await packed.batchGetNodeBytes(codecLabelBytes(labels))), want);
  assert.deepEqual(recordsOfBytes(await packed.batchGetNodeBytes(new Uint8Array(0))), []);
  await assert.rejects(packed.batchGetNodeBytes(new Uint8Array(33)), RangeError);

  const remote = new InstrumentedDatabase(packed, { maxKeysPerRead: 2 });
  assert.deepEqual(recordsOfBytes(await remote.batchGetNodeBytes!(codecLabelBytes(labels))), want);
  assert.deepEqual(
    [remote.stats.batchReads, remote.stats.batchKeys, remote.stats.roundTrips],
    [1, 5, 3],
  );
  // a wrapper answers in bytes only where the store it wraps does
  assert.equal(new InstrumentedDatabase(db).batchGetNodeBytes, undefined);

  const storage = new StorageManager(remote);
  assert.equal(storage.readsNodeBytes(), true);
  assert.deepEqual(recordsOfBytes(await storage.readNodeBytes(codecLabelBytes(labels))), want);
  assert.deepEqual([storage.metrics.dbBatchGets, storage.metrics.dbBatchKeys], [1, 5]);
  const tx = storage.beginTransaction();
  assert.equal(tx.readsNodeBytes(), true);
  assert.deepEqual(recordsOfBytes(await tx.readNodeBytes(codecLabelBytes([label(3)]))), [rec[2]]);
  await tx.rollback();
  assert.equal(await codeOf(tx.readNodeBytes(codecLabelBytes([label(3)]))), 'STORAGE_TRANSACTION');

  const plain = new StorageManager(db);
  assert.equal(plain.readsNodeBytes(), false);
  assert.equal(plain.beginTransaction().readsNodeBytes(), false);
  assert.equal(
    await codeOf(plain.readNodeBytes(codecLabelBytes([label(1)]))),
    'STORAGE_TRANSACTION',
  );
});

test('aligned records answer in bytes as a store would, and codec labels read back as labels', async () => {
  const { rec } = await store();
  const want = [rec[1], undefined, rec[0], rec[1]];
  const answer = nodeRecordBytes(want);
  assert.equal(answer.buffers.length, 1);
  assert.deepEqual(Array.from(answer.buffer), [0, -1, 0, 0]);
  assert.deepEqual(recordsOfBytes(answer), want);
  assert.deepEqual(recordsOfBytes(nodeRecordBytes([])), []);
  const labels = [label(2), NodeLabel.root(), new NodeLabel(new Uint8Array(32).fill(0x80), 1)];
  assert.deepEqual(
    codecLabels(codecLabelBytes(labels)).map((l) => l.key),
    labels.map((l) => l.key),
  );
  assert.equal(codecLabelCount(codecLabelBytes(labels)), 3);
  assert.throws(() => codecLabelCount(new Uint8Array(35)), /34 bytes each, not 35/);
  assert.throws(() => codecLabels(new Uint8Array(1)), RangeError);
});

test("records a driver's statements found answer in bytes, or nothing where a position or a record is wrong", async () => {
  const { rec } = await store();
  const [one, two] = [recordBytes(rec[0]!), recordBytes(rec[1]!)];
  // two statements of two labels each, for a batch of three: positions from 1 in each
  const answer = foundRecordsAnswer(3, 2, [
    [
      [2, one],
      [1, two],
    ],
    [[1, two]],
  ]);
  assert.ok(answer);
  assert.equal(answer.buffers.length, 2);
  assert.deepEqual(recordsOfBytes(answer), [rec[1], rec[0], rec[1]]);
  assert.deepEqual(Array.from(foundRecordsAnswer(2, 2, [[]])!.buffer), [-1, -1]);
  const one1 = (i: unknown, record: unknown) => foundRecordsAnswer(1, 2, [[[i, record]]]);
  assert.ok(one1(1, one));
  assert.equal(one1(2, one), undefined, 'past the batch');
  assert.equal(foundRecordsAnswer(4, 2, [[[3, one]]]), undefined, 'past its chunk');
  assert.equal(one1(0, one), undefined);
  assert.equal(one1('1', one), undefined);
  assert.equal(one1(1, null), undefined, 'no record written');
  assert.equal(one1(1, one.subarray(0, one.length - 1)), undefined, 'short');
  assert.equal(one1(1, Uint8Array.of(...one, 0)), undefined, 'bytes left');
  assert.equal(one1(1, Uint8Array.of(2, ...one.subarray(1))), undefined, 'another kind');
});

test("records a driver's server joined answer in bytes as they are, or nothing where a position or a record is wrong", async () => {
  const { rec } = await store();
  const [one, two] = [recordBytes(rec[0]!), recordBytes(rec[1]!)];
  const at = (i: number, record: Uint8Array) =>
    Uint8Array.of(i >>> 24, (i >>> 16) & 255, (i >>> 8) & 255, i & 255, ...record);
  const join = (...parts: Uint8Array[]) => Uint8Array.from(parts.flatMap((p) => [...p]));
  // two statements of two labels each, for a batch of three: positions from 1 in each
  const first = join(at(2, one), at(1, two));
  const answer = joinedRecordsAnswer(3, 2, [first, join(at(1, two))]);
  assert.ok(answer);
  assert.equal(answer.buffers[0]!.buffer, first.buffer, 'views of the joined bytes');
  const fromBuffer = joinedRecordsAnswer(1, 2, [Buffer.from(at(1, one))])!;
  assert.equal(Object.getPrototypeOf(fromBuffer.buffers[0]), Uint8Array.prototype, 'plain views');
  assert.deepEqual(recordsOfBytes(answer), [rec[1], rec[0], rec[1]]);
  assert.deepEqual(Array.from(joinedRecordsAnswer(2, 2, [undefined])!.buffer), [-1, -1]);
  assert.deepEqual(Array.from(joinedRecordsAnswer(2, 2, [new Uint8Array(0)])!.buffer), [-1, -1]);
  const one1 = (joined: Uint8Array) => joinedRecordsAnswer(1, 2, [joined]);
  assert.ok(one1(at(1, one)));
  assert.equal(one1(at(2, one)), undefined, 'past the batch');
  assert.equal(joinedRecordsAnswer(4, 2, [at(3, one)]), undefined, 'past its chunk');
  assert.equal(one1(at(0, one)), undefined);
  assert.equal(one1(at(2 ** 31, one)), undefined);
  assert.equal(one1(at(1, one).subarray(0, 4 + one.length - 1)), undefined, 'short');
  assert.equal(one1(Uint8Array.of(...at(1, one), 0)), undefined, 'bytes left');
  assert.equal(one1(Uint8Array.of(...at(1, one), 0, 0, 0, 1, 1)), undefined, 'a record cut short');
  assert.equal(one1(at(1, Uint8Array.of(2, ...one.subarray(1)))), undefined, 'another kind');
  const badLabel = Uint8Array.from(one);
  badLabel[1] = 0xff; // a label longer than 256 bits
  assert.equal(one1(at(1, badLabel)), undefined);
});

test('an answer in bytes reads the same after the store rewrote, compacted and dropped its slabs', async () => {
  const packed = new PackedMemoryDatabase({ slabBytes: 1024 });
  const leaves = Array.from({ length: 20 }, (_, i) => leafRecord(label(i + 1), 1n));
  await packed.batchSet(leaves);
  const answer = await packed.batchGetNodeBytes(codecLabelBytes(leaves.map((r) => r.label)));
  assert.ok(answer.buffers.length > 1, 'records in several slabs');
  for (let epoch = 2n; epoch < 12n; epoch++) {
    await packed.batchSet(leaves.map((r) => leafRecord(r.label, epoch)));
  }
  const usage = packed.slabUsage();
  assert.ok(usage.compacted > 0 && usage.slabs <= 4, 'the first slabs were dropped');
  assert.deepEqual(recordsOfBytes(answer), leaves);
});

test("a node's bytes are checked as skipRecord checks them, and u64s read as the doubles they convert to", () => {
  const w = new ByteWriter();
  const node = leafRecord(label(4), 5n);
  writeRecord(w, node);
  const bytes = w.done();
  const at = RECORD_LATEST;
  const length = nodeBytesLength(bytes, at);
  assert.equal(at + length + 1, bytes.length, 'the latest node, then the previous flag');
  const bad = (change: (b: Uint8Array) => Uint8Array | void, message: RegExp) => {
    const b = bytes.slice();
    const cut = change(b) ?? b;
    assert.throws(
      () => nodeBytesLength(cut, at),
      (e: unknown) => e instanceof RangeError && message.test(e.message),
    );
  };
  bad((b) => b.subarray(0, at + 50), /truncated/);
  bad((b) => b.subarray(0, at + length - 1), /truncated/);
  bad((b) => void (b[at + NODE_FIELD.children] = 4), /children flag/);
  bad((b) => void (b[at + NODE_FIELD.type] = 0), /node type/);
  bad((b) => void (b[at] = 2), /longer than 256/);
  bad((b) => void (b[at + 50] = 2), /longer than 256/);
  // a node with a child whose label is too long
  const parent = { ...node.latest, nodeType: 3 as const, leftChild: label(5) };
  const pw = new ByteWriter();
  writeRecord(pw, { ...node, latest: parent });
  const withChild = pw.done();
  assert.equal(nodeBytesLength(withChild, at), length + CHILD_BYTES);
  // the child's write epoch follows its label; all ones reads back as none
  const epochAt = at + NODE_FIELD.child + NODE_FIELD.childEpoch;
  assert.equal(u64Number(withChild, epochAt), 2 ** 64);
  assert.equal(
    (readRecord(new ByteReader(withChild)) as TreeNodeRecord).latest.leftEpoch,
    undefined,
  );
  const epochWriter = new ByteWriter();
  writeRecord(epochWriter, { ...node, latest: { ...parent, leftEpoch: 3n } });
  const withEpoch = epochWriter.done();
  assert.equal(u64Number(withEpoch, epochAt), 3);
  assert.equal((readRecord(new ByteReader(withEpoch)) as TreeNodeRecord).latest.leftEpoch, 3n);
  withChild[at + NODE_FIELD.child] = 9;
  assert.throws(() => nodeBytesLength(withChild, at), /longer than 256/);

  const u64 = (v: bigint) => {
    const b = new Uint8Array(10);
    new DataView(b.buffer).setBigUint64(1, v);
    return u64Number(b, 1);
  };
  for (const v of [
    0n,
    1n,
    0xffffffffn,
    1n << 32n,
    (1n << 53n) - 1n,
    1n << 53n,
    (1n << 53n) + 1n,
    (1n << 64n) - 1n,
  ]) {
    assert.equal(u64(v), Number(v), String(v));
  }
});

test('a walk reads through a store that answers in bytes, each record a copy of its own bytes', async () => {
  const { db, rec } = await store();
  const packed = new PackedMemoryDatabase();
  await packed.batchSet(db.allRecords());
  const answers: NodeRecordBytes[] = [];
  let byRecords = 0;
  // the store's answers are views of its slabs: the spy hands the walk copies it can spoil
  const spy = Object.assign(Object.create(packed) as PackedMemoryDatabase, {
    batchGetNodeBytes: async (labels: Uint8Array) => {
      const answer = await packed.batchGetNodeBytes(labels);
      const copy = { ...answer, buffers: answer.buffers.map((b) => b.slice()) };
      answers.push(copy);
      return copy;
    },
    batchGetNodes: async (labels: readonly NodeLabel[]) => {
      byRecords++;
      return packed.batchGetNodes(labels);
    },
  });
  const labels = [label(2), label(9), label(1), label(2)];
  const want = [rec[1], undefined, rec[0], rec[1]];
  const got = await readWalkNodes(spy, labels, undefined);
  assert.deepEqual(got, want);
  assert.deepEqual([answers.length, byRecords], [1, 0]);
  for (const b of answers[0]!.buffers) b.fill(0);
  assert.deepEqual(got, want, 'the records do not view the answer');
  // the storage manager reads a walk's nodes the same way
  const storage = new StorageManager(spy);
  assert.deepEqual(await storage.readNodes(labels), want);
  assert.deepEqual([answers.length, byRecords], [2, 0]);
  assert.deepEqual(await readWalkNodes(spy, [], undefined), []);
  // a store without reads in bytes is asked for records
  assert.deepEqual(await readWalkNodes(db, labels, undefined), want);
  // bytes that are not tree-node records are refused, not decoded
  const azks = new ByteWriter(64);
  writeRecord(azks, { kind: 'azks', latestEpoch: 1n, numNodes: 1n });
  const odd = { buffers: [azks.done()], buffer: Int32Array.of(0), starts: Int32Array.of(0) };
  assert.throws(() => recordsOfBytes(odd), /not a tree-node record/);
  const cut = { ...odd, buffers: [recordBytes(rec[0]!).subarray(0, 40)] };
  assert.throws(() => recordsOfBytes(cut), RangeError);
});
