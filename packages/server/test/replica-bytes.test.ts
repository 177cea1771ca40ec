// A memory store's changes as bytes (replication/codec.ts, replica.ts): replicas take records
// as the bytes they are, snapshots of packed and object stores hold the same (in memory and as
// files written piece by piece), large batches are cut into pieces with the azks record last,
// and bytes that are not changes write nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeLabel } from '@akd-ts/core';
import {
  ByteReader,
  MemoryDatabase,
  PackedMemoryDatabase,
  readRecord,
  type DbRecord,
} from '@akd-ts/storage';
import { leafRecord } from '@akd-ts/storage/conformance';
import { encodeChanges } from '../src/replication/codec.js';
import {
  RecordingDatabase,
  applyChanges,
  piecesOf,
  readSnapshotFile,
  replicaOf,
  snapshotOf,
  writeSnapshotFile,
} from '../src/replication/replica.js';

function leaf(i: number): DbRecord {
  const val = new Uint8Array(32);
  new DataView(val.buffer).setUint32(0, i);
  return leafRecord(new NodeLabel(val, 256), 1n, i & 0xff);
}

const state = (name: string, epoch: bigint): DbRecord => ({
  kind: 'valueState',
  username: new TextEncoder().encode(name),
  epoch,
  version: epoch,
  label: NodeLabel.root(),
  value: new TextEncoder().encode(`${name}-${epoch}`),
});

const azks = (epoch: bigint): DbRecord => ({ kind: 'azks', latestEpoch: epoch, numNodes: 7n });

async function filled<D extends MemoryDatabase | PackedMemoryDatabase>(db: D): Promise<D> {
  await db.batchSet([azks(2n), leaf(1), leaf(2), state('a', 1n), state('a', 2n)]);
  await db.setSetting('configuration', 'whatsapp_v1');
  const hash = new Uint8Array(32).fill(3);
  await db.setAuditBlob({ epoch: 1n, previousHash: hash, currentHash: hash, data: hash });
  return db;
}

/** Everything a store holds, comparable. */
async function contents(db: PackedMemoryDatabase) {
  const records = snapshotOf(db);
  return {
    records: db.allRecords().length,
    azks: await db.get({ kind: 'azks' }),
    states: (await db.getUserData(new TextEncoder().encode('a'))).map((s) => s.epoch),
    settings: db.allSettings(),
    blobs: db.allAuditBlobs().map((b) => b.epoch),
    bytes: records.length,
  };
}

test('snapshots of an object store and of a packed one make the same replica', async () => {
  const fromObjects = await replicaOf(snapshotOf(await filled(new MemoryDatabase())));
  const fromPacked = await replicaOf(snapshotOf(await filled(new PackedMemoryDatabase())));
  assert.deepEqual(await contents(fromObjects), await contents(fromPacked));
  assert.equal(fromPacked.allRecords().length, 5);
  assert.deepEqual(fromPacked.allSettings(), [['configuration', 'whatsapp_v1']]);
});

test('a large batch is cut into pieces of at most the given records, its azks record last', async () => {
  const records = [leaf(1), azks(5n), ...Array.from({ length: 9 }, (_, i) => leaf(i + 2))];
  assert.deepEqual(piecesOf(records, 11), [records], 'small enough: one piece, as it is');
  const kinds = (pieces: DbRecord[][]) => pieces.map((p) => p.map((r) => r.kind));
  assert.deepEqual(kinds(piecesOf(records, 4)), [
    ['treeNode', 'treeNode', 'treeNode', 'treeNode'],
    ['treeNode', 'treeNode', 'treeNode', 'treeNode'],
    ['treeNode', 'treeNode'],
    ['azks'],
  ]);
  assert.deepEqual(
    kinds(piecesOf(records.slice(2), 3)),
    [
      ['treeNode', 'treeNode', 'treeNode'],
      ['treeNode', 'treeNode', 'treeNode'],
      ['treeNode', 'treeNode', 'treeNode'],
    ],
    'no azks record: no last piece for it',
  );

  // the writer's store sends one change a piece, and a replica fed them holds the batch
  const changes: Uint8Array[] = [];
  const recording = new RecordingDatabase(new PackedMemoryDatabase(), (c) => changes.push(c), 4);
  await recording.batchSet(records);
  assert.equal(changes.length, 4);
  const replica = new PackedMemoryDatabase();
  for (const c of changes) await applyChanges(replica, c);
  assert.equal(replica.allRecords().length, records.length);
  assert.equal((await replica.get({ kind: 'azks' })).latestEpoch, 5n);
  // reads of tree nodes, aligned or in bytes, go to the store it records for, where it has them
  const nodes = records.filter((r) => r.kind === 'treeNode');
  const labels = nodes.map((r) => r.label);
  assert.deepEqual(await recording.batchGetNodes!(labels), nodes);
  const asked = new Uint8Array(34 * labels.length);
  labels.forEach((l, i) => {
    asked[34 * i + 1] = l.len & 0xff;
    asked[34 * i] = l.len >> 8;
    asked.set(l.val, 34 * i + 2);
  });
  const { starts } = await recording.batchGetNodeBytes!(asked);
  assert.equal(starts.length, labels.length);
  assert.ok(starts.every((at) => at >= 0));
  const plain = new RecordingDatabase(new MemoryDatabase(), () => {});
  assert.equal(plain.batchGetNodeBytes, undefined);
});

test('exported records in pieces import to the same store as the records exported whole', async () => {
  const db = new PackedMemoryDatabase();
  await db.batchSet([azks(9n), ...Array.from({ length: 50 }, (_, i) => leaf(i))]);
  const whole = db.exportRecords();
  const pieces = [...db.exportRecordPieces(1_000)];
  assert.ok(pieces.length > 3, `${pieces.length} pieces`);
  for (const p of pieces.slice(0, -1)) assert.ok(p.length <= 1_000, `a piece of ${p.length} bytes`);
  const count = (p: Uint8Array) => new DataView(p.buffer, p.byteOffset).getUint32(0);
  assert.equal(
    pieces.reduce((n, p) => n + count(p), 0),
    51,
  );
  const last = new ByteReader(pieces.at(-1)!);
  const kinds: string[] = [];
  for (let i = count(pieces.at(-1)!), _ = last.u32(); i > 0; i--) kinds.push(readRecord(last).kind);
  assert.equal(kinds.at(-1), 'azks', 'the azks record is in the last piece');
  // a record larger than the bound is a piece of its own (the azks record joins the last)
  assert.deepEqual([...db.exportRecordPieces(10)].map(count), [...Array(49).fill(1), 2]);
  const fromPieces = new PackedMemoryDatabase();
  for (const p of pieces) await fromPieces.importRecords(p);
  assert.deepEqual(fromPieces.exportRecords(), whole);
  assert.deepEqual([...new PackedMemoryDatabase().exportRecordPieces(1_000)].map(count), [0]);
});

test('a snapshot file holds what an in-memory snapshot holds, and is removed once read', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'akd-snapshot-'));
  try {
    for (const db of [
      await filled(new MemoryDatabase()),
      await filled(new PackedMemoryDatabase()),
    ]) {
      const file = join(dir, `s-${db.constructor.name}`);
      let turns = 0;
      await writeSnapshotFile(db, file, async () => {
        turns++;
      });
      assert.equal(turns, db instanceof PackedMemoryDatabase ? 1 : 0);
      await assert.rejects(writeSnapshotFile(db, file), { code: 'EEXIST' }, 'never overwritten');
      assert.ok(readFileSync(file).length > 0);
      const replica = await readSnapshotFile(file);
      assert.equal(existsSync(file), false);
      assert.deepEqual(await contents(replica), await contents(await replicaOf(snapshotOf(db))));
    }
    // without `between` it is written whole before the call returns: nothing else can run
    const packed = await filled(new PackedMemoryDatabase());
    const whole = join(dir, 'whole');
    const writing = writeSnapshotFile(packed, whole);
    assert.deepEqual(new Uint8Array(readFileSync(whole)), snapshotOf(packed));
    await writing;
    // a file that is not a snapshot: the change bytes' error, and the file is gone anyway
    const bad = join(dir, 'bad');
    writeFileSync(bad, Uint8Array.of(9));
    await assert.rejects(readSnapshotFile(bad), RangeError);
    assert.equal(existsSync(bad), false);
    // a failure while writing removes the file
    const broken = join(dir, 'broken');
    await assert.rejects(
      writeSnapshotFile(await filled(new PackedMemoryDatabase()), broken, async () => {
        throw new Error('the disk is full');
      }),
      /the disk is full/,
    );
    assert.equal(existsSync(broken), false);
    // a folder that does not exist: nothing written, the file system's error
    await assert.rejects(
      writeSnapshotFile(await filled(new PackedMemoryDatabase()), join(dir, 'none', 'x')),
      { code: 'ENOENT' },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('change bytes that cannot be read write nothing: RangeError before the first write', async () => {
  const db = await filled(new PackedMemoryDatabase());
  const before = await contents(db);
  const good = encodeChanges([
    { kind: 'setting', name: 'x', value: 'y' },
    { kind: 'records', records: [leaf(9), azks(3n)] },
  ]);
  const truncated = good.subarray(0, good.length - 3);
  const unknownChange = Uint8Array.of(...good, 9);
  const unknownRecord = good.slice();
  // the kind byte of the first record: after the setting (1 + 4 + 1 + 4 + 1), change kind, count
  unknownRecord[11 + 1 + 4] = 7;
  for (const bytes of [truncated, unknownChange, unknownRecord]) {
    await assert.rejects(applyChanges(db, bytes), RangeError);
    assert.deepEqual(await contents(db), before);
  }
  await applyChanges(db, good);
  assert.equal((await db.get({ kind: 'azks' })).latestEpoch, 3n);
  assert.equal(await db.getSetting('x'), 'y');
});
