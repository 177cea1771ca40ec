// The audit blob cache: bounded by bytes, least recently used out first, one read for
// concurrent requests of a blob, nothing kept from a failed read, and a range larger than the
// cache that fills free room without evicting (so repeated scans of it still find part).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError } from '@akd-ts/core';
import { MemoryDatabase, StorageManager, type AuditBlobRecord } from '@akd-ts/storage';
import { AuditBlobCache, StoredAuditBlobs } from '@akd-ts/directory';

function blob(epoch: bigint, size: number): AuditBlobRecord {
  return {
    epoch,
    previousHash: new Uint8Array(32).fill(Number(epoch) - 1),
    currentHash: new Uint8Array(32).fill(Number(epoch)),
    data: new Uint8Array(size).fill(Number(epoch)),
  };
}

/** A cache over a counting reader of blobs of `size` bytes each. */
function counted(maxBytes: number, size: number) {
  const cache = new AuditBlobCache(maxBytes);
  const reads: bigint[] = [];
  const get = (epoch: bigint, evict = true) =>
    cache.get(
      epoch,
      async () => {
        reads.push(epoch);
        return blob(epoch, size);
      },
      evict,
    );
  return { cache, reads, get };
}

test('a blob read once is answered from memory, the same bytes', async () => {
  const { cache, reads, get } = counted(1000, 100);
  const first = await get(1n);
  const again = await get(1n);
  assert.equal(again, first);
  assert.deepEqual(reads, [1n]);
  assert.deepEqual(cache.stats(), { hits: 1, misses: 1, blobs: 1, bytes: 100 });
});

test('the least recently used blob goes first once the bytes are over the bound', async () => {
  const { cache, reads, get } = counted(300, 100);
  for (const e of [1n, 2n, 3n]) await get(e);
  await get(1n); // 2 is now the least recently used
  await get(4n);
  assert.deepEqual(cache.stats().bytes, 300);
  reads.length = 0;
  for (const e of [1n, 3n, 4n]) await get(e);
  assert.deepEqual(reads, [], 'kept: 1, 3 and 4');
  await get(2n);
  assert.deepEqual(reads, [2n], 'evicted: 2');
});

test('concurrent requests of one blob share a single read', async () => {
  const cache = new AuditBlobCache(1000);
  let reads = 0;
  let finish!: () => void;
  const read = () =>
    new Promise<AuditBlobRecord>((resolve) => {
      reads++;
      finish = () => resolve(blob(5n, 10));
    });
  const all = Promise.all([cache.get(5n, read), cache.get(5n, read), cache.get(5n, read)]);
  finish();
  const [a, b, c] = await all;
  assert.equal(reads, 1);
  assert.ok(a === b && b === c);
  assert.deepEqual(cache.stats(), { hits: 2, misses: 1, blobs: 1, bytes: 10 });
});

test('a failed read is not kept: every waiter sees the error, the next request reads again', async () => {
  const cache = new AuditBlobCache(1000);
  const failing = async (): Promise<AuditBlobRecord> => {
    throw new AkdError('STORAGE_CONNECTION', 'the store went away');
  };
  const both = [cache.get(2n, failing), cache.get(2n, failing)];
  for (const p of both) {
    await assert.rejects(p, (e) => e instanceof AkdError && e.code === 'STORAGE_CONNECTION');
  }
  assert.equal(cache.stats().blobs, 0);
  const later = await cache.get(2n, async () => blob(2n, 10));
  assert.equal(later.data.length, 10);
  assert.equal(cache.stats().blobs, 1);
});

test('a blob larger than the whole cache is served but not kept', async () => {
  const { cache, reads, get } = counted(50, 100);
  await get(1n);
  await get(1n);
  assert.deepEqual(reads, [1n, 1n]);
  assert.deepEqual(cache.stats().bytes, 0);
});

test('without eviction, a blob is kept only in free room and nothing is evicted', async () => {
  const { cache, reads, get } = counted(250, 100);
  await get(1n, false);
  await get(2n, false);
  await get(3n, false); // no room left for it
  assert.deepEqual(cache.stats(), { hits: 0, misses: 3, blobs: 2, bytes: 200 });
  reads.length = 0;
  // a second scan finds what the first kept
  for (const e of [1n, 2n, 3n]) await get(e, false);
  assert.deepEqual(reads, [3n]);
});

test('the bound must be a positive whole number of bytes', () => {
  for (const bad of [0, -1, 1.5, Number.NaN, 2 ** 60]) {
    assert.throws(() => new AuditBlobCache(bad), RangeError);
  }
});

/** A directory source over a memory store holding blobs 1..`epochs` of `size` bytes each. */
async function storedBlobs(epochs: number, size: number) {
  const db = new MemoryDatabase();
  for (let e = 1n; e <= BigInt(epochs); e++) await db.setAuditBlob(blob(e, size));
  let reads = 0;
  const getAuditBlob = db.getAuditBlob.bind(db);
  db.getAuditBlob = (epoch) => {
    reads++;
    return getAuditBlob(epoch);
  };
  const source = {
    storage: new StorageManager(db),
    getEpochHash: async () => ({ epoch: BigInt(epochs), hash: new Uint8Array(32).fill(epochs) }),
  };
  return { source, reads: () => reads };
}

async function readRange(blobs: StoredAuditBlobs, from: bigint, to: bigint): Promise<number> {
  const { steps } = await blobs.range(from, to);
  let bytes = 0;
  for await (const step of blobs.data(steps)) bytes += step.data.length;
  return bytes;
}

test('stored blobs through a cache: a range that fits is read from the store once', async () => {
  const { source, reads } = await storedBlobs(4, 100);
  const blobs = new StoredAuditBlobs(source, { cache: new AuditBlobCache(400) });
  assert.equal(await readRange(blobs, 0n, 4n), 400);
  assert.equal(await readRange(blobs, 0n, 4n), 400);
  assert.equal(reads(), 4);
  // single blobs, named by their end epoch, come from the same memory
  const one = await blobs.blobAt(3n);
  assert.deepEqual(one?.record.data, new Uint8Array(100).fill(3));
  assert.equal(reads(), 4);
  assert.equal(await blobs.blobAt(9n), undefined);
});

test('stored blobs through a cache: a range larger than it keeps its first steps across scans', async () => {
  const { source, reads } = await storedBlobs(6, 100);
  const cache = new AuditBlobCache(300);
  const blobs = new StoredAuditBlobs(source, { cache });
  await readRange(blobs, 0n, 6n);
  assert.equal(reads(), 6);
  await readRange(blobs, 0n, 6n);
  // steps 1-3 stayed; under least-recently-used eviction every step would be read again
  assert.equal(reads(), 9);
  assert.deepEqual(cache.stats().bytes, 300);
  // a range that fits may evict
  await readRange(blobs, 3n, 6n);
  await readRange(blobs, 3n, 6n);
  assert.equal(reads(), 12);
});

test('a blob missing from the store is not kept: once written, it is served', async () => {
  const db = new MemoryDatabase();
  const source = {
    storage: new StorageManager(db),
    getEpochHash: async () => ({ epoch: 1n, hash: new Uint8Array(32).fill(1) }),
  };
  const blobs = new StoredAuditBlobs(source, { cache: new AuditBlobCache(1000) });
  assert.equal(await blobs.blobAt(1n), undefined);
  await db.setAuditBlob({ ...blob(1n, 10), previousHash: new Uint8Array(32) });
  assert.equal((await blobs.blobAt(1n))?.record.data.length, 10);
});

test('warming reads the newest blobs that fit, newest first, and evicts nothing', async () => {
  const { source, reads } = await storedBlobs(6, 100);
  const cache = new AuditBlobCache(350);
  const blobs = new StoredAuditBlobs(source, { cache });
  await blobs.blobAt(1n); // held before: kept, and counted against the room
  assert.equal((await blobs.warm()).read, 2);
  assert.equal(reads(), 3);
  for (const e of [1n, 6n, 5n]) assert.ok(cache.holds(e), `holds ${e}`);
  assert.ok(!cache.holds(4n));
  // nothing left to do: no read
  assert.equal((await blobs.warm()).read, 0);
  assert.equal(reads(), 3);
  // without a cache there is nothing to warm
  assert.equal((await new StoredAuditBlobs(source).warm()).read, 0);
});

test('warming stops once aborted, and skips epochs with no stored blob', async () => {
  const { source, reads } = await storedBlobs(3, 100);
  const stop = new AbortController();
  stop.abort();
  const cache = new AuditBlobCache(1000);
  assert.equal((await new StoredAuditBlobs(source, { cache }).warm(stop.signal)).read, 0);
  assert.equal(reads(), 0);
  // a directory whose latest epoch has no blob yet (published before blobs were kept)
  const ahead = { ...source, getEpochHash: async () => ({ epoch: 4n, hash: new Uint8Array(32) }) };
  assert.equal((await new StoredAuditBlobs(ahead, { cache }).warm()).read, 3);
  assert.equal(cache.stats().blobs, 3);
});

test('warming after an epoch looks only at the steps that end after it', async () => {
  const { source, reads } = await storedBlobs(6, 100);
  const cache = new AuditBlobCache(1000);
  assert.equal((await new StoredAuditBlobs(source, { cache }).warm(undefined, 4n)).read, 2);
  assert.equal(reads(), 2);
  assert.ok(cache.holds(5n) && cache.holds(6n) && !cache.holds(4n));
  assert.equal((await new StoredAuditBlobs(source, { cache }).warm(undefined, 6n)).read, 0);
});

test('warming walks back over more epochs than one batch of sizes', async () => {
  const { source, reads } = await storedBlobs(250, 1);
  const cache = new AuditBlobCache(1000);
  assert.equal((await new StoredAuditBlobs(source, { cache }).warm()).read, 250);
  assert.equal(reads(), 250);
  assert.ok(cache.holds(1n) && cache.holds(250n));
});
