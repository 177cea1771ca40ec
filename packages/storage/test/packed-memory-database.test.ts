import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  ByteReader,
  ByteWriter,
  MemoryDatabase,
  PackedMemoryDatabase,
  nodeKey,
  readRecord,
  skipRecord,
  writeRecord,
  type DbRecord,
  type TreeNodeRecord,
  type ValueStateRecord,
} from '@akd-ts/storage';
import { assertRecordEqual, leafRecord, runDatabaseConformance } from '@akd-ts/storage/conformance';
import { assertClosedRefusesEveryCall } from './closed-store.js';

runDatabaseConformance('packed memory', async () => new PackedMemoryDatabase());

const u = (s: string) => new TextEncoder().encode(s);

function leafLabel(i: number): NodeLabel {
  const val = new Uint8Array(32);
  new DataView(val.buffer).setUint32(0, i * 2654435761);
  val[31] = i & 0xff;
  return new NodeLabel(val, 256);
}

function stateOf(name: string, epoch: bigint, value = 'v'): ValueStateRecord {
  return {
    kind: 'valueState',
    username: u(name),
    epoch,
    version: epoch,
    label: leafLabel(Number(epoch)),
    value: u(value),
  };
}

function sortRecords(records: DbRecord[]): string[] {
  const w = new ByteWriter();
  return records
    .map((r) => {
      w.reset();
      writeRecord(w, r);
      return Buffer.from(w.written()).toString('hex');
    })
    .sort();
}

test('a closed packed database refuses every call', async () => {
  const db = new PackedMemoryDatabase();
  await db.close();
  await assertClosedRefusesEveryCall(db, u('a'));
  await assert.rejects(db.importRecords(new Uint8Array(4)), /closed/);
});

test('records read back are copies: a read never changes with later writes', async () => {
  const db = new PackedMemoryDatabase();
  const first = leafRecord(leafLabel(1), 1n, 1);
  await db.set(first);
  const read = (await db.get(nodeKey(leafLabel(1)))) as TreeNodeRecord;
  await db.set(leafRecord(leafLabel(1), 2n, 2));
  assertRecordEqual(read, first);
  assert.equal(((await db.get(nodeKey(leafLabel(1)))) as TreeNodeRecord).latest.lastEpoch, 2n);
});

const MiB = 1 << 20;

test('rewritten records leave their slabs, which are compacted and dropped', async () => {
  const db = new PackedMemoryDatabase({ slabBytes: MiB });
  const n = 6_000; // about 1.3 MiB a round: more than one slab
  for (let round = 1; round <= 6; round++) {
    const records: DbRecord[] = [];
    for (let i = 0; i < n; i++) records.push(leafRecord(leafLabel(i), BigInt(round), round));
    // half of the users get a new version each round, the others keep theirs
    // (3,000 users: more than the first table holds)
    for (let i = 0; i < 3_000; i++) {
      if (round === 1 || i % 2 === 0) records.push(stateOf(`user-${i}`, BigInt(round)));
    }
    await db.batchSet(records);
    const usage = db.slabUsage();
    // dead bytes stay below about the live ones (plus the slab being filled)
    assert.ok(usage.bytes <= 2 * usage.liveBytes + 2 * MiB, JSON.stringify(usage));
  }
  for (let i = 0; i < n; i += 997) {
    const r = (await db.get(nodeKey(leafLabel(i)))) as TreeNodeRecord;
    assertRecordEqual(r, leafRecord(leafLabel(i), 6n, 6));
  }
  assert.equal((await db.getUserData(u('user-2'))).length, 6);
  assert.deepEqual(
    (await db.getUserData(u('user-1'))).map((s) => s.epoch),
    [1n],
  );
  const all = db.allRecords();
  assert.equal(all.length, n + 1_500 * 6 + 1_500);
});

test('a small write compacts a bounded part of a sparse slab; reads are right throughout', async () => {
  // slabs of 16 MiB hold about 70,000 leaves; rewriting most of them makes slabs sparse
  const db = new PackedMemoryDatabase({ slabBytes: 16 * MiB });
  const n = 120_000;
  const all = (round: number) =>
    Array.from({ length: n }, (_, i) => leafRecord(leafLabel(i), BigInt(round), round));
  await db.batchSet(all(1));
  // rewritten in pieces of 500 leaves (about 120 KB): each piece compacts about 1 MiB of
  // slab, not the whole sparse slab at once
  const second = all(2);
  let before = db.slabUsage().compacted;
  let writes = 0;
  for (let from = 0; from < n; from += 500) {
    await db.batchSet(second.slice(from, from + 500));
    writes++;
    const usage = db.slabUsage();
    // at most 1 MiB (and the record it stopped in) gone through per write
    const done = usage.compacted - before;
    assert.ok(done <= MiB + 1024, `${done} bytes compacted by one write`);
    before = usage.compacted;
    const i = (from * 7919) % n;
    const expected = i < from + 500 ? 2 : 1;
    assertRecordEqual(
      (await db.get(nodeKey(leafLabel(i)))) as TreeNodeRecord,
      leafRecord(leafLabel(i), BigInt(expected), expected),
    );
  }
  assert.equal(writes, 240);
  assert.ok(before > 8 * MiB, `${before} bytes compacted along the way: a sparse slab`);
  // what compaction left behind is done by the next writes
  for (let k = 0; k < 40; k++) await db.set(leafRecord(leafLabel(k), 3n, 3));
  const usage = db.slabUsage();
  assert.equal(usage.toCompact, 0);
  assert.ok(usage.bytes <= 2 * usage.liveBytes + 2 * 16 * MiB, JSON.stringify(usage));
  for (let i = 0; i < n; i += 4999) {
    const round = i < 40 ? 3 : 2;
    assertRecordEqual(
      (await db.get(nodeKey(leafLabel(i)))) as TreeNodeRecord,
      leafRecord(leafLabel(i), BigInt(round), round),
    );
  }
  assert.equal(db.allRecords().length, n);
});

test('a value state written again for its epoch replaces it, with one or several epochs', async () => {
  const db = new PackedMemoryDatabase();
  await db.set(stateOf('a', 1n, 'x'));
  await db.set(stateOf('a', 1n, 'y'));
  assert.deepEqual(
    (await db.getUserData(u('a'))).map((s) => s.value),
    [u('y')],
  );
  await db.set(stateOf('a', 2n, 'z'));
  await db.set(stateOf('a', 1n, 'w'));
  await db.set(stateOf('a', 2n, 'q'));
  assert.deepEqual(
    (await db.getUserData(u('a'))).map((s) => [s.epoch, new TextDecoder().decode(s.value)]),
    [
      [1n, 'w'],
      [2n, 'q'],
    ],
  );
  assert.equal(db.slabUsage().liveBytes, 2 * (4 + 1 + 4 + 1 + 16 + 34 + 4 + 1));
});

test('a large record gets a slab of its own, dropped when it is replaced', async () => {
  const db = new PackedMemoryDatabase({ slabBytes: MiB });
  const big = stateOf('big', 1n, 'x'.repeat(3 << 20));
  await db.set(big);
  assertRecordEqual(await db.get({ kind: 'valueState', username: u('big'), epoch: 1n }), big);
  assert.equal(db.slabUsage().slabs, 1);
  await db.set(stateOf('big', 1n, 'small'));
  assert.equal(db.slabUsage().bytes, MiB);
});

test('slabs are 64 bytes to 64 MiB, 64 MiB by default', async () => {
  for (const slabBytes of [63, 64 * MiB + 1, 100.5]) {
    assert.throws(() => new PackedMemoryDatabase({ slabBytes }), RangeError);
  }
  const db = new PackedMemoryDatabase();
  await db.set(stateOf('a', 1n));
  assert.equal(db.slabUsage().bytes, 64 * MiB);
  const small = new PackedMemoryDatabase({ slabBytes: 64 });
  await small.batchSet([stateOf('a', 1n), stateOf('b', 1n)]);
  assert.equal(small.slabUsage().slabs, 2);
  assert.equal((await small.getUserData(u('b')))[0]!.epoch, 1n);
});

test('exported records import into another store as they were, azks included', async () => {
  const source = new MemoryDatabase();
  const packed = new PackedMemoryDatabase();
  const records: DbRecord[] = [{ kind: 'azks', latestEpoch: 3n, numNodes: 9n }];
  for (let i = 0; i < 50; i++) records.push(leafRecord(leafLabel(i), 1n, i));
  records.push(stateOf('a', 1n), stateOf('a', 2n), stateOf('b', 1n));
  await source.batchSet(records);
  await packed.batchSet(records);
  const copy = new PackedMemoryDatabase();
  await copy.importRecords(packed.exportRecords());
  assert.deepEqual(sortRecords(copy.allRecords()), sortRecords(source.allRecords()));
  assert.deepEqual(sortRecords(packed.allRecords()), sortRecords(records));
  // an empty store exports no records
  const empty = new PackedMemoryDatabase();
  assert.deepEqual(empty.exportRecords(), new Uint8Array(4));
  await empty.importRecords(new Uint8Array(4));
  assert.deepEqual(empty.allRecords(), []);
});

test('bytes that are not records are STORAGE_CORRUPT and write nothing', async () => {
  const db = new PackedMemoryDatabase();
  await db.set(leafRecord(leafLabel(7), 1n, 1));
  const before = db.slabUsage();
  const good = new PackedMemoryDatabase();
  await good.batchSet([leafRecord(leafLabel(1), 1n), stateOf('a', 1n)]);
  const bytes = good.exportRecords();
  const corrupt = (b: Uint8Array) =>
    assert.rejects(
      db.importRecords(b),
      (e: unknown) => e instanceof AkdError && e.code === 'STORAGE_CORRUPT',
    );
  await corrupt(bytes.subarray(0, bytes.length - 1)); // truncated
  await corrupt(Uint8Array.of(...bytes, 0)); // trailing bytes
  await corrupt(Uint8Array.of(0, 0)); // no count
  const kind = bytes.slice();
  kind[4] = 9; // unknown record kind
  await corrupt(kind);
  const long = bytes.slice();
  long[5] = 0x01; // label length 256 + 256
  long[6] = 0x01;
  await corrupt(long);
  assert.equal(db.allRecords().length, 1);
  assert.deepEqual(db.slabUsage(), before);
});

test('skipRecord rejects flags and node types readRecord would misread', () => {
  const w = new ByteWriter();
  writeRecord(w, leafRecord(leafLabel(1), 1n));
  const bytes = w.done();
  assert.equal(skipRecord(new ByteReader(bytes)), 1);
  const at = (bytes: Uint8Array) => () => skipRecord(new ByteReader(bytes));
  // kind, label (34), node label (34), two epochs (16), parent (34), node type, children
  const nodeType = 1 + 34 + 34 + 16 + 34;
  const badType = bytes.slice();
  badType[nodeType] = 7;
  assert.throws(at(badType), /node type/);
  const badChildren = bytes.slice();
  badChildren[nodeType + 1] = 4;
  assert.throws(at(badChildren), /children flag/);
  const badPrevious = bytes.slice();
  badPrevious[bytes.length - 1] = 2;
  assert.throws(at(badPrevious), /previous flag/);
  const r = new ByteReader(bytes);
  assert.equal(readRecord(r).kind, 'treeNode');
  assert.equal(r.left, 0);
});

test('the tables grow by several doublings and every record is found after', async () => {
  const db = new PackedMemoryDatabase();
  const nodes = 20_000; // the nodes' table starts at 4,096 slots, at most half full
  const users = 6_000;
  for (let from = 0; from < nodes; from += 2_500) {
    const records: DbRecord[] = [];
    for (let i = from; i < from + 2_500; i++) records.push(leafRecord(leafLabel(i), 1n, i));
    await db.batchSet(records);
  }
  for (let i = 0; i < users; i++) {
    await db.set(stateOf(`user-${i}`, 1n, `a${i}`));
    // every third user also has a second epoch (a list of locations, not one)
    if (i % 3 === 0) await db.set(stateOf(`user-${i}`, 2n, `b${i}`));
  }
  // a node written again replaces its entry: found once, with the new value
  await db.set(leafRecord(leafLabel(7), 2n, 70_000));
  const keys = Array.from({ length: nodes }, (_, i) => nodeKey(leafLabel(i)));
  const found = (await db.batchGet(keys)) as TreeNodeRecord[];
  assert.equal(found.length, nodes);
  const byLabel = new Map(found.map((r) => [r.label.toString(), r]));
  for (let i = 0; i < nodes; i++) {
    const want = i === 7 ? leafRecord(leafLabel(7), 2n, 70_000) : leafRecord(leafLabel(i), 1n, i);
    assertRecordEqual(byLabel.get(leafLabel(i).toString())!, want);
  }
  for (let i = 0; i < users; i += 7) {
    const states = await db.getUserData(u(`user-${i}`));
    assert.deepEqual(
      states.map((s) => new TextDecoder().decode(s.value)),
      i % 3 === 0 ? [`a${i}`, `b${i}`] : [`a${i}`],
    );
  }
  await assert.rejects(
    db.getUserData(u('nobody')),
    (e) => e instanceof AkdError && e.code === 'STORAGE_NOT_FOUND',
  );
});
