// A memory store's changes as bytes (replication/codec.ts, replica.ts): replicas take records
// as the bytes they are, snapshots of packed and object stores hold the same, large batches
// are cut into steps with the azks record last, and bytes that are not changes write nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeLabel } from '@akd-ts/core';
import {
  ByteReader,
  MemoryDatabase,
  PackedMemoryDatabase,
  readRecord,
  type DbRecord,
} from '@akd-ts/storage';
import { leafRecord } from '@akd-ts/storage/conformance';
import { encodeChanges, readChanges, recordsChange } from '../src/replication/codec.js';
import { applyChanges, replicaOf, snapshotOf, stepsOf } from '../src/replication/replica.js';

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

test('a large batch is cut into steps of chunkSize records, its azks record last', () => {
  const records = [leaf(1), azks(5n), ...Array.from({ length: 9 }, (_, i) => leaf(i + 2))];
  const change = encodeChanges([{ kind: 'records', records }]);
  const [raw] = readChanges(change);
  assert.equal(raw?.kind, 'records');
  const body = (raw as { body: Uint8Array }).body;
  assert.deepEqual(stepsOf(body, 11), [body], 'small enough: one step, as it is');
  const steps = stepsOf(body, 4);
  const kinds = steps.map((step) => {
    const r = new ByteReader(step);
    const count = r.u32();
    const out: string[] = [];
    for (let i = 0; i < count; i++) out.push(readRecord(r).kind);
    assert.equal(r.left, 0);
    return out;
  });
  assert.deepEqual(kinds, [
    ['treeNode', 'treeNode', 'treeNode', 'treeNode'],
    ['treeNode', 'treeNode', 'treeNode', 'treeNode'],
    ['treeNode', 'treeNode'],
    ['azks'],
  ]);
  assert.deepEqual(recordsChange(body), change);
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
