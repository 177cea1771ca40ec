/**
 * Audit blobs in parts (schema version 5): sizes around the part boundary read back whole on
 * the calling thread and the blob thread, a blob written again drops the parts it no longer
 * has, and parts that do not add up are STORAGE_CORRUPT on both, naming the epoch.
 */

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { SqliteDatabase } from '../src/index.js';
import { AUDIT_BLOB_PART_BYTES, blobParts } from '../src/audit-blob-parts.js';
import { raw, rejectsWith, tempDir } from './support/helpers.js';

const tmp = tempDir('blob-parts');
after(tmp.remove);
let n = 0;
const freshPath = () => tmp.path(`p${n++}.db`);
const PART = AUDIT_BLOB_PART_BYTES;

const blob = (epoch: bigint, size: number, salt = 0) => ({
  epoch,
  previousHash: new Uint8Array(32).fill(1),
  currentHash: new Uint8Array(32).fill(2),
  data: Uint8Array.from({ length: size }, (_, i) => (i * 13 + salt + Number(epoch)) & 0xff),
});

function partRows(path: string): { epoch: bigint; part: bigint; size: bigint }[] {
  const db = raw(path);
  try {
    return db
      .prepare(
        'SELECT epoch, part, length(data) AS size FROM audit_blob_parts ORDER BY epoch, part',
      )
      .all() as { epoch: bigint; part: bigint; size: bigint }[];
  } finally {
    db.close();
  }
}

test('blobParts cuts views of one part each, the last one short', () => {
  const data = new Uint8Array(2 * PART + 3);
  const parts = blobParts(data);
  assert.deepEqual(
    parts.map((p) => p.length),
    [PART, PART, 3],
  );
  assert.ok(parts.every((p) => p.buffer === data.buffer));
  assert.deepEqual(
    blobParts(new Uint8Array(PART)).map((p) => p.length),
    [PART],
  );
  assert.deepEqual(
    blobParts(new Uint8Array(0)).map((p) => p.length),
    [0],
  );
});

test('blobs around the part size read back whole, on both connections', async () => {
  const path = freshPath();
  const writer = await SqliteDatabase.open(path);
  const sizes = [1, PART - 1, PART, PART + 1, 2 * PART, 3 * PART + 5];
  const blobs = sizes.map((size, i) => blob(BigInt(i + 1), size));
  for (const b of blobs) await writer.setAuditBlob(b);
  const threaded = await SqliteDatabase.open(path, { auditBlobThread: true });
  try {
    for (const b of blobs) {
      assert.deepEqual(await writer.getAuditBlob(b.epoch), b);
      assert.deepEqual(await threaded.getAuditBlob(b.epoch), b);
    }
    assert.equal(Reflect.get(threaded, 'blobThread').gone, undefined, 'the thread read them');
    assert.deepEqual(
      (await writer.getAuditBlobInfos(blobs.map((b) => b.epoch))).map((i) => i.size),
      sizes,
    );
    // parts 1.. of the blobs past one part, each full but the last
    assert.deepEqual(
      partRows(path).map((r) => [r.epoch, r.part, r.size]),
      [
        [4n, 1n, 1n],
        [5n, 1n, BigInt(PART)],
        [6n, 1n, BigInt(PART)],
        [6n, 2n, BigInt(PART)],
        [6n, 3n, 5n],
      ],
    );
  } finally {
    await threaded.close();
    await writer.close();
  }
});

test('a blob written again keeps none of the parts it had', async () => {
  const path = freshPath();
  const db = await SqliteDatabase.open(path);
  try {
    await db.setAuditBlob(blob(7n, 3 * PART + 1));
    const shorter = blob(7n, PART + 2, 1);
    await db.setAuditBlob(shorter);
    assert.deepEqual(await db.getAuditBlob(7n), shorter);
    assert.equal(partRows(path).length, 1);
    const small = blob(7n, 9, 2);
    await db.setAuditBlob(small);
    assert.deepEqual(await db.getAuditBlob(7n), small);
    assert.deepEqual(partRows(path), []);
  } finally {
    await db.close();
  }
});

test('a failed blob write leaves the blob that was stored', async () => {
  const path = freshPath();
  const db = await SqliteDatabase.open(path);
  const stored = blob(3n, 2 * PART + 7);
  try {
    await db.setAuditBlob(stored);
    // the third part's insert fails inside the write's transaction
    const r = raw(path);
    r.exec(
      'CREATE TRIGGER no_third AFTER INSERT ON audit_blob_parts WHEN NEW.part = 2 ' +
        "BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    r.close();
    await rejectsWith(db.setAuditBlob(blob(3n, 3 * PART, 5)), 'STORAGE_TRANSACTION', 'refused');
    assert.deepEqual(await db.getAuditBlob(3n), stored);
  } finally {
    await db.close();
  }
});

test('parts that do not add up are STORAGE_CORRUPT on both connections', async () => {
  const path = freshPath();
  const writer = await SqliteDatabase.open(path);
  for (let e = 1n; e <= 4n; e++) await writer.setAuditBlob(blob(e, 3 * PART + 9));
  const r = raw(path);
  r.exec('DELETE FROM audit_blob_parts WHERE epoch = 1 AND part = 2'); // a gap
  r.exec('DELETE FROM audit_blob_parts WHERE epoch = 2 AND part = 3'); // short of the size
  r.exec("UPDATE audit_blob_parts SET data = x'00' WHERE epoch = 3 AND part = 1"); // a short part
  r.exec('UPDATE audit_blobs SET size = 2 * size WHERE epoch = 4'); // a size past the parts
  r.close();
  const threaded = await SqliteDatabase.open(path, { auditBlobThread: true });
  const problems: [bigint, string][] = [
    [1n, 'part 3 where part 2 was expected'],
    [2n, 'the parts hold'],
    [3n, 'part 1 has 1 bytes'],
    [4n, 'part 3 has 9 bytes'], // a short part before the end of the size
  ];
  try {
    for (const db of [writer, threaded]) {
      for (const [epoch, problem] of problems) {
        await rejectsWith(db.getAuditBlob(epoch), 'STORAGE_CORRUPT', `epoch=${epoch}`, problem);
      }
    }
    assert.equal(Reflect.get(threaded, 'blobThread').gone, undefined, 'the thread still reads');
  } finally {
    await threaded.close();
    await writer.close();
  }
});

test('a size that no first part can have is STORAGE_CORRUPT', async () => {
  const path = freshPath();
  const db = await SqliteDatabase.open(path);
  try {
    await db.setAuditBlob(blob(1n, 10));
    const r = raw(path);
    r.exec('UPDATE audit_blobs SET size = 20 WHERE epoch = 1');
    r.close();
    await rejectsWith(db.getAuditBlob(1n), 'STORAGE_CORRUPT', 'epoch=1', 'first part 10');
  } finally {
    await db.close();
  }
});
