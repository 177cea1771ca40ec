/**
 * Audit blobs read on a worker thread (auditBlobThread): the same records as the calling
 * thread reads, the driver's errors as AkdErrors, and the calling thread's connection once
 * the thread is gone.
 */

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { AkdError } from '@akd-ts/core';
import { SqliteDatabase } from '../src/index.js';
import { BlobThread } from '../src/blob-thread.js';
import { raw, rejectsWith, tempDir } from './support/helpers.js';

const tmp = tempDir('blob-thread');
after(tmp.remove);
let n = 0;
const freshPath = () => tmp.path(`b${n++}.db`);

const blob = (epoch: bigint, size: number) => ({
  epoch,
  previousHash: new Uint8Array(32).fill(1),
  currentHash: new Uint8Array(32).fill(2),
  data: Uint8Array.from({ length: size }, (_, i) => (i * 7 + Number(epoch)) & 0xff),
});

/** Replaces the store's audit_blobs with a view whose reads fail in SQLite. */
function failingBlobs(path: string): void {
  const db = raw(path);
  try {
    db.exec(
      'DROP TABLE audit_blobs; CREATE VIEW audit_blobs (epoch, previous_hash, current_hash, data, size) ' +
        "AS SELECT 1, x'00', x'00', abs(-9223372036854775808), 1",
    );
  } finally {
    db.close();
  }
}

test('a store with the thread reads the blobs the calling thread reads, large and small', async () => {
  const path = freshPath();
  const writer = await SqliteDatabase.open(path);
  const blobs = [blob(1n, 10), blob(2n, 3 * 1024 * 1024 + 5)];
  for (const b of blobs) await writer.setAuditBlob(b);
  const threaded = await SqliteDatabase.open(path, { auditBlobThread: true });
  try {
    for (const b of blobs) {
      assert.deepEqual(await threaded.getAuditBlob(b.epoch), await writer.getAuditBlob(b.epoch));
    }
    await rejectsWith(threaded.getAuditBlob(3n), 'STORAGE_NOT_FOUND', 'epoch 3');
    // an epoch no store can hold is missing, without asking the thread
    await rejectsWith(threaded.getAuditBlob(1n << 63n), 'STORAGE_NOT_FOUND');
    assert.equal(Reflect.get(threaded, 'blobThread').gone, undefined, 'the thread read them');
  } finally {
    await threaded.close();
    await writer.close();
  }
  await rejectsWith(threaded.getAuditBlob(1n), 'STORAGE_CONNECTION', 'closed');
});

test("the thread's read errors are the driver's AkdErrors", async () => {
  const path = freshPath();
  await (await SqliteDatabase.open(path)).close();
  const db = await SqliteDatabase.open(path, { auditBlobThread: true });
  try {
    failingBlobs(path);
    await rejectsWith(
      db.getAuditBlob(1n),
      'STORAGE_CONNECTION',
      'audit blob of epoch 1',
      'overflow',
    );
    assert.equal(Reflect.get(db, 'blobThread').gone, undefined, 'the thread still reads');
  } finally {
    await db.close();
  }
});

test("once the thread is gone, the calling thread's connection reads", async () => {
  const path = freshPath();
  const db = await SqliteDatabase.open(path, { auditBlobThread: true });
  try {
    await db.setAuditBlob(blob(1n, 1000));
    const thread = Reflect.get(db, 'blobThread') as BlobThread;
    await thread.close();
    assert.match(thread.gone!, /closed/);
    assert.deepEqual((await db.getAuditBlob(1n)).data, blob(1n, 1000).data);
  } finally {
    await db.close();
  }
});

test('a thread that cannot open its store refuses reads with the reason', async () => {
  const thread = new BlobThread(tmp.path('missing.db'), { cacheSizeKiB: 1024, busyTimeoutMs: 0 });
  await assert.rejects(thread.read(1n), /audit blob reader thread stopped: it failed: .*/);
  assert.match(thread.gone!, /failed/);
  await assert.rejects(thread.read(2n), /stopped/);
  await thread.close();
});

test('a read that fails in SQLite rejects with its error and leaves the thread reading', async () => {
  const path = freshPath();
  await (await SqliteDatabase.open(path)).close();
  failingBlobs(path);
  const thread = new BlobThread(path, { cacheSizeKiB: 1024, busyTimeoutMs: 0 });
  try {
    await assert.rejects(thread.read(1n), (e: Error) => {
      assert.ok(!(e instanceof AkdError));
      assert.match(e.message, /overflow/);
      return true;
    });
    assert.equal(thread.gone, undefined);
  } finally {
    await thread.close();
  }
});

test('auditBlobThread must be a boolean', async () => {
  await assert.rejects(
    SqliteDatabase.open(freshPath(), { auditBlobThread: 'yes' as never }),
    /auditBlobThread must be true or false/,
  );
});
