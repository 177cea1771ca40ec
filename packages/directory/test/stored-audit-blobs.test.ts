// Audit blobs stored as epochs are published: one per step, verifying as a chain against the
// published roots on every store; a store without them (migrated from an older version) is
// filled in; readers list and fetch only what is stored, up to the epoch they know, and read
// past roots from them.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  NodeLabel,
  decodeSingleAppendOnlyProof,
  parseAuditBlobName,
  utf8,
  verifyAuditChain,
  type AuditBlob,
} from '@akd-ts/core';
import {
  MemoryDatabase,
  StorageManager,
  nodeKey,
  type AuditBlobRecord,
  type Database,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { ReadOnlyDirectory, StoredAuditBlobs } from '@akd-ts/directory';
import { testStores } from '../../../test/support/stores.js';
import { hardCodedKeys, openDirectory } from './support/build.js';
import { FailingDatabase } from './support/failing-database.js';

const STORES = testStores();
after(() => Promise.all(STORES.map((s) => s.cleanup())));

const isCode = (code: string) => (e: unknown) => e instanceof AkdError && e.code === code;

/** `inner`, logging `blob <epoch>` to `events` as each audit blob is stored. */
function loggingBlobs(inner: Database, events: string[]): Database {
  const db = Object.create(inner) as Database;
  db.setAuditBlob = (blob) => {
    events.push(`blob ${blob.epoch}`);
    return inner.setAuditBlob(blob);
  };
  return db;
}

/** `n` epochs of a few new labels and one update each; returns every root, epoch 0 first. */
async function publishEpochs(
  dir: {
    publish: (u: { label: Uint8Array; value: Uint8Array }[]) => Promise<{ hash: Uint8Array }>;
  },
  from: number,
  to: number,
  roots: Uint8Array[],
): Promise<void> {
  for (let e = from; e <= to; e++) {
    const updates = [0, 1, 2].map((i) => ({ label: utf8(`u${e}-${i}`), value: utf8(`v${e}`) }));
    updates.push({ label: utf8('alice'), value: utf8(`alice-${e}`) });
    roots[e] = (await dir.publish(updates)).hash;
  }
}

function asBlob(r: AuditBlobRecord): AuditBlob {
  return {
    name: { epoch: r.epoch, previousHash: r.previousHash, currentHash: r.currentHash },
    data: r.data,
  };
}

for (const store of STORES) {
  test(
    `${store.name}: each publish stores its step's blob, and they verify as one chain`,
    { skip: store.skip },
    async () => {
      const t = await openDirectory('whatsapp_v1', { store });
      const roots = [(await t.dir.getEpochHash()).hash];
      await publishEpochs(t.dir, 1, 6, roots);
      // an unchanged publish creates no epoch and no blob
      await t.dir.publish([{ label: utf8('alice'), value: utf8('alice-6') }]);
      const infos = await t.db.getAuditBlobInfos([0n, 1n, 2n, 3n, 4n, 5n, 6n, 7n]);
      assert.deepEqual(
        infos.map((i) => i.epoch),
        [1n, 2n, 3n, 4n, 5n, 6n],
      );
      const blobs: AuditBlob[] = [];
      for (const info of infos) {
        const record = await t.db.getAuditBlob(info.epoch);
        assert.equal(record.data.length, info.size);
        assert.deepEqual(record.previousHash, roots[Number(info.epoch) - 1]);
        assert.deepEqual(record.currentHash, roots[Number(info.epoch)]);
        // each step inserts its new labels and alice's new version (and marks the old stale)
        const proof = decodeSingleAppendOnlyProof(record.data);
        assert.equal(proof.inserted.length, info.epoch === 1n ? 4 : 5);
        blobs.push(asBlob(record));
      }
      const chain = verifyAuditChain(t.config, blobs, {
        anchor: { epoch: 0n, rootHash: roots[0]! },
      });
      assert.deepEqual([chain.verified, chain.last.epoch], [6, 6n]);
      assert.deepEqual(chain.last.rootHash, roots[6]);
      // every published root can be read back, the past ones from the blobs
      for (const [epoch, root] of roots.entries()) {
        assert.deepEqual(await t.dir.getRootHashAt(BigInt(epoch)), root, `root of ${epoch}`);
      }
      await assert.rejects(t.dir.getRootHashAt(7n), isCode('DIRECTORY_INVALID_EPOCH'));
      await assert.rejects(t.dir.getRootHashAt(-1n), isCode('DIRECTORY_INVALID_EPOCH'));
      await t.dir.close();
    },
  );
}

test("a publish stores its step's blob once its tree is built, before the commit starts", async () => {
  const inner = await STORES[0]!.open();
  const events: string[] = [];
  const db = loggingBlobs(inner, events);
  const t = await openDirectory('whatsapp_v1', { db });
  const roots = [(await t.dir.getEpochHash()).hash];
  for (const e of [1, 2]) {
    const updates = Array.from({ length: 40 }, (_, i) => ({
      label: utf8(`user-${e}-${i}`),
      value: utf8(`v${e}`),
    }));
    updates.push({ label: utf8('alice'), value: utf8(`alice-${e}`) });
    let last: string | undefined;
    const published = await t.dir.publish(updates, {
      onProgress: (p) => {
        if (p.phase !== last) events.push((last = p.phase));
      },
    });
    roots[e] = published.hash;
  }
  const phases = ['versions', 'vrf', 'preload', 'tree'];
  assert.deepEqual(events, [
    ...phases,
    'blob 1',
    'commit',
    'done',
    ...phases,
    'blob 2',
    'commit',
    'done',
  ]);
  // the blobs are the steps' proofs between the published roots
  const blobs = await Promise.all([1n, 2n].map((e) => db.getAuditBlob(e)));
  blobs.forEach((b, i) => {
    assert.deepEqual([b.previousHash, b.currentHash], [roots[i], roots[i + 1]]);
  });
  const chain = verifyAuditChain(t.config, blobs.map(asBlob), {
    anchor: { epoch: 0n, rootHash: roots[0]! },
  });
  assert.deepEqual([chain.verified, chain.last.rootHash], [2, roots[2]]);
  await t.dir.close();
});

test('a publish whose insertion cannot build its step reads it back before the commit', async () => {
  const inner = new MemoryDatabase();
  const events: string[] = [];
  const db = loggingBlobs(inner, events);
  const t = await openDirectory('whatsapp_v1', { db });
  const roots = [(await t.dir.getEpochHash()).hash];
  await publishEpochs(t.dir, 1, 1, roots);
  await t.dir.close();
  // both children of the root claim the next epoch (a tree that breaks its invariants): the
  // insertion loads one side's child without its children, so its own nodes do not hold the
  // step, while the record walk still reads it
  const root = (await inner.get(nodeKey(NodeLabel.root()))) as TreeNodeRecord;
  for (const child of [root.latest.leftChild!, root.latest.rightChild!]) {
    const r = (await inner.get(nodeKey(child))) as TreeNodeRecord;
    await inner.set({ ...r, latest: { ...r.latest, lastEpoch: 2n }, previous: r.latest });
  }
  const u = await openDirectory('whatsapp_v1', { db });
  events.length = 0;
  let last: string | undefined;
  const published = await u.dir.publish([{ label: utf8('bob'), value: utf8('b1') }], {
    onProgress: (p) => {
      if (p.phase !== last) events.push((last = p.phase));
    },
  });
  assert.deepEqual(events, ['versions', 'vrf', 'preload', 'tree', 'commit', 'blob 2', 'done']);
  const blob = await inner.getAuditBlob(2n);
  assert.deepEqual([blob.previousHash, blob.currentHash], [roots[1], published.hash]);
  await u.dir.close();
});

test('a publish that fails after writing its blob leaves the epoch unpublished; the retry replaces the blob', async () => {
  const failing = new FailingDatabase(await STORES[0]!.open(), ['write']);
  const t = await openDirectory('whatsapp_v1', { db: failing });
  const roots = [(await t.dir.getEpochHash()).hash];
  await publishEpochs(t.dir, 1, 2, roots);
  // writes of a publish: the blob, its VRF proofs, then the commit's batch; fail the commit
  failing.arm(3);
  await assert.rejects(
    t.dir.publish([{ label: utf8('bob'), value: utf8('b1') }]),
    isCode('STORAGE_CONNECTION'),
  );
  assert.equal((await t.dir.getEpochHash()).epoch, 2n);
  const stale = await failing.getAuditBlob(3n);
  const reader = new StoredAuditBlobs(t.dir);
  assert.equal(await reader.blobAt(3n), undefined, 'readers never look past the latest epoch');
  assert.deepEqual(
    (await reader.list({ maxKeys: 10 })).contents.map((c) => parseAuditBlobName(c.key).epoch),
    [1n, 2n],
  );
  // the retry publishes something else as epoch 3: its blob replaces the stale one
  roots[3] = (await t.dir.publish([{ label: utf8('carol'), value: utf8('c1') }])).hash;
  const fresh = await failing.getAuditBlob(3n);
  assert.deepEqual(fresh.currentHash, roots[3]);
  assert.notDeepEqual(fresh.currentHash, stale.currentHash);
  await t.dir.close();
});

/** A store that drops audit blobs, as one written before stores kept them. */
function withoutBlobs(inner: Database): Database & { keep: boolean } {
  const db = Object.create(inner) as Database & { keep: boolean };
  db.keep = false;
  db.setAuditBlob = (blob) => (db.keep ? inner.setAuditBlob(blob) : Promise.resolve());
  return db;
}

test('a store without blobs (from before they were kept) is filled in, oldest first', async () => {
  const db = withoutBlobs(await STORES[0]!.open());
  const t = await openDirectory('experimental', { db });
  const roots = [(await t.dir.getEpochHash()).hash];
  await publishEpochs(t.dir, 1, 4, roots);
  db.keep = true;
  await publishEpochs(t.dir, 5, 5, roots); // the first epoch after the upgrade has its blob

  const reader = await ReadOnlyDirectory.open({
    config: t.config,
    storage: new StorageManager(db),
    vrfKeys: hardCodedKeys(),
  });
  // a root whose following step has no blob cannot be read yet; the newest two can
  await assert.rejects(reader.getRootHashAt(2n), isCode('STORAGE_NOT_FOUND'));
  assert.deepEqual(await reader.getRootHashAt(4n), roots[4]);
  assert.deepEqual(await reader.getRootHashAt(5n), roots[5]);
  const stored = new StoredAuditBlobs(reader);
  const range = await stored.range(0n, 5n);
  assert.deepEqual(range.missing, [1n, 2n, 3n, 4n]);
  assert.deepEqual(
    range.steps.map((s) => s.epoch),
    [5n],
  );
  assert.deepEqual(
    (await stored.list({ maxKeys: 10 })).contents.map((c) => parseAuditBlobName(c.key).epoch),
    [5n],
    'listings skip what is missing',
  );

  const filled: bigint[] = [];
  assert.equal(await t.dir.fillMissingAuditBlobs({ onBlob: (e) => filled.push(e) }), 4);
  assert.deepEqual(filled, [1n, 2n, 3n, 4n]);
  assert.equal(await t.dir.fillMissingAuditBlobs(), 0, 'nothing left');
  const full = await stored.range(0n, 5n);
  assert.deepEqual(full.missing, []);
  const blobs: AuditBlob[] = [];
  for await (const r of stored.data(full.steps)) blobs.push(asBlob(r));
  const chain = verifyAuditChain(t.config, blobs, { anchor: { epoch: 0n, rootHash: roots[0]! } });
  assert.deepEqual(chain.last.rootHash, roots[5]);

  // an aborted fill writes nothing more
  const again = withoutBlobs(await STORES[0]!.open());
  const u = await openDirectory('whatsapp_v1', { db: again });
  await publishEpochs(u.dir, 1, 2, []);
  again.keep = true;
  const stop = new AbortController();
  stop.abort();
  assert.equal(await u.dir.fillMissingAuditBlobs({ signal: stop.signal }), 0);
  await Promise.all([t.dir.close(), u.dir.close(), reader.close()]);
});

test('listings in S3 key order, by either naming, with pages and prefixes', async () => {
  const t = await openDirectory('whatsapp_v1');
  const roots = [(await t.dir.getEpochHash()).hash];
  await publishEpochs(t.dir, 1, 12, roots);
  const end = new StoredAuditBlobs(t.dir);
  const keys = async (q: { prefix?: string; startAfter?: string; maxKeys: number }, s = end) =>
    (await s.list(q)).contents.map((c) => c.key.split('/')[0]);
  assert.deepEqual(await keys({ maxKeys: 100 }), [
    '1',
    '10',
    '11',
    '12',
    '2',
    '3',
    '4',
    '5',
    '6',
    '7',
    '8',
    '9',
  ]);
  const page = await end.list({ maxKeys: 3 });
  assert.equal(page.isTruncated, true);
  assert.equal(page.nextStartAfter, page.contents[2]!.key);
  assert.deepEqual(await keys({ maxKeys: 3, startAfter: page.nextStartAfter! }), ['12', '2', '3']);
  assert.deepEqual(await keys({ maxKeys: 100, prefix: '1' }), ['1', '10', '11', '12']);
  assert.deepEqual(await keys({ maxKeys: 100, prefix: '7/' }), ['7']);
  const seven = (await end.list({ maxKeys: 1, prefix: '7/' })).contents[0]!;
  assert.equal((await end.list({ maxKeys: 1, prefix: seven.key.slice(0, 10) })).contents.length, 1);
  assert.equal((await end.list({ maxKeys: 1, prefix: '7/zz' })).contents.length, 0);
  assert.deepEqual(await keys({ maxKeys: 100, startAfter: seven.key }), ['8', '9']);
  assert.equal((await end.list({ maxKeys: 0 })).isTruncated, true);
  assert.equal((await end.list({ maxKeys: 100, prefix: '13' })).contents.length, 0);

  const start = new StoredAuditBlobs(t.dir, { naming: 'start' });
  assert.deepEqual(await keys({ maxKeys: 3 }, start), ['0', '1', '10']);
  const zero = await start.blobAt(0n);
  assert.deepEqual(zero?.record.currentHash, roots[1]);
  assert.equal(zero?.key.split('/')[0], '0');
  assert.equal(await start.blobAt(12n), undefined, 'start-named 12 would be the step to 13');
  assert.equal(await end.blobAt(0n), undefined);
  assert.throws(() => new StoredAuditBlobs(t.dir, { naming: 'middle' as never }), RangeError);
  await t.dir.close();
});

test('a listing past many missing epochs stops early and says where to go on', async () => {
  const db = withoutBlobs(await STORES[0]!.open());
  const t = await openDirectory('whatsapp_v1', { db });
  await publishEpochs(t.dir, 1, 6, []);
  db.keep = true;
  await publishEpochs(t.dir, 7, 7, []);
  const stored = new StoredAuditBlobs(t.dir, { scanLimit: 2 });
  const first = await stored.list({ maxKeys: 10 });
  assert.deepEqual(
    [first.contents.length, first.isTruncated, first.nextStartAfter],
    [0, true, '2/~'],
  );
  const second = await stored.list({ maxKeys: 10, startAfter: first.nextStartAfter! });
  assert.equal(second.nextStartAfter, '4/~');
  const last = await stored.list({ maxKeys: 10, startAfter: '6/~' });
  assert.deepEqual(
    [last.contents.map((c) => c.key.split('/')[0]), last.isTruncated],
    [['7'], false],
  );
  await t.dir.close();
});

test('stored blobs that do not chain, or a latest blob off the root, are DIRECTORY_TREE', async () => {
  const db = await STORES[0]!.open();
  const t = await openDirectory('whatsapp_v1', { db });
  await publishEpochs(t.dir, 1, 3, []);
  const stored = new StoredAuditBlobs(t.dir);
  await assert.rejects(stored.range(3n, 3n), isCode('DIRECTORY_INVALID_EPOCH'));
  await assert.rejects(stored.range(0n, 4n), isCode('DIRECTORY_INVALID_EPOCH'));
  const two = await db.getAuditBlob(2n);
  await db.setAuditBlob({ ...two, currentHash: new Uint8Array(32).fill(9) });
  await assert.rejects(stored.range(0n, 3n), isCode('DIRECTORY_TREE'));
  const three = await db.getAuditBlob(3n);
  await db.setAuditBlob({ ...three, currentHash: new Uint8Array(32).fill(7) });
  await assert.rejects(stored.blobAt(3n), isCode('DIRECTORY_TREE'));
  await assert.rejects(stored.list({ maxKeys: 10 }), isCode('DIRECTORY_TREE'));
  await assert.rejects(stored.range(2n, 3n), isCode('DIRECTORY_TREE'));
  await t.dir.close();
});
