import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, NodeLabel, configurationByName, type AzksElement } from '@akd-ts/core';
import { MemoryDatabase, StorageManager, nodeKey, type TreeNodeRecord } from '@akd-ts/storage';
import { Azks, Parallelism, type InsertOptions } from '@akd-ts/directory';
import type { Piscina } from 'piscina';
import { CONFIG_NAMES } from './support/build.js';
import { endTreeWorkers, holdTreeWorkers, treeWorkers } from '../src/tree/arena/workers.js';
import {
  arenaEpoch,
  assertSameRecords,
  clusteredLeaves,
  emptyTree,
  leafStartingWith,
  randomBytes,
  referenceEpoch,
} from './support/differential.js';

async function errorOf(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AkdError, `an AkdError, not ${String(e)}`);
    return { code: e.code, message: e.message };
  }
  assert.fail('expected a failure');
}

for (const name of CONFIG_NAMES) {
  const config = configurationByName(name);

  test(`${name}: random epochs with split edges at every depth store exactly the reference's records`, async () => {
    for (const seed of [1, 2, 3]) {
      const bytes = randomBytes(seed);
      const a = await emptyTree(config);
      const b = await emptyTree(config);
      const taken = new Set<string>();
      for (let epoch = 1; epoch <= 6; epoch++) {
        // 3,000 elements take the frames above the synchronous chunks, and a yield
        const n = [1, 2, 40, 300, 7, seed === 1 ? 3000 : 120][epoch - 1]!;
        const elements = clusteredLeaves(bytes, n, 1 + ((seed * epoch) % 5), taken);
        const x = await arenaEpoch(config, a.storage, elements);
        const y = await referenceEpoch(config, b.storage, elements);
        assert.deepEqual(x, y, `seed ${seed} epoch ${epoch}: the AZKS record`);
        assertSameRecords(a.db, b.db);
      }
    }
  });

  test(`${name}: the result does not depend on worker threads, parallel levels or batch sizes`, async () => {
    const bytes = randomBytes(9);
    const epochs = [300, 50, 200, 1, 2].map((n) => clusteredLeaves(bytes, n, 3));
    const reference = await emptyTree(config);
    for (const e of epochs) await referenceEpoch(config, reference.storage, e);
    const settings: InsertOptions[] = [
      { levels: undefined, maxBatchSize: 1 },
      { levels: 0, maxBatchSize: 3 },
      { levels: 5, maxBatchSize: 1000 },
      ...[0, 1, 2, 3, 4, 8].map((degree) => ({
        levels: 2,
        maxBatchSize: 50,
        insertion: Parallelism.static(degree),
        minTaskSize: 1 + (degree % 3) * 20,
      })),
      { levels: undefined, maxBatchSize: 50, insertion: Parallelism.availableOr(2) },
    ];
    for (const options of settings) {
      const t = await emptyTree(config);
      for (const e of epochs) await arenaEpoch(config, t.storage, e, options);
      assertSameRecords(t.db, reference.db);
    }
  });
}

const config = configurationByName('whatsapp_v1');

/** A tree A, B (epoch 1), then C next to A (epoch 2), in two stores built the same way. */
async function twoStores(): Promise<{
  stores: { db: MemoryDatabase; storage: StorageManager }[];
  a: AzksElement;
  b: AzksElement;
}> {
  const leaf = leafStartingWith(randomBytes(5));
  const a = leaf(0x10);
  const b = leaf(0x90);
  const c = leaf(0x11);
  const stores = [await emptyTree(config), await emptyTree(config)];
  for (const s of stores) {
    await referenceEpoch(config, s.storage, [a, b]);
    await referenceEpoch(config, s.storage, [c]);
  }
  return { stores, a, b };
}

test('a child newer than its parent is read at its earlier version, as the reference reads it', async () => {
  const { stores, a, b } = await twoStores();
  for (const { db, storage } of stores) {
    // B claims epoch 3 while its parent, the root, is at 2; its previous copy is from epoch 1
    const record = (await db.get(nodeKey(b.label))) as TreeNodeRecord;
    await db.set({
      ...record,
      latest: { ...record.latest, lastEpoch: 3n },
      previous: record.latest,
    });
    storage.flushCache();
  }
  // re-inserting A changes no epoch, so the root is rehashed at epoch 2 and reads B's previous
  const x = await arenaEpoch(config, stores[0]!.storage, [a]);
  const y = await referenceEpoch(config, stores[1]!.storage, [a]);
  assert.deepEqual(x, y);
  assertSameRecords(stores[0]!.db, stores[1]!.db);
});

test('a missing node fails as the reference fails, and a missing sibling hashes as empty', async () => {
  const { stores, a, b } = await twoStores();
  for (const { db, storage } of stores) {
    const record = (await db.get(nodeKey(b.label))) as TreeNodeRecord;
    await db.set({ ...record, latest: { ...record.latest, lastEpoch: 9n }, previous: undefined });
    storage.flushCache();
  }
  // B is not visible at epoch 3: the sibling of A's side counts as no child
  const fresh = { label: new NodeLabel(new Uint8Array(32).fill(0x12), 256), value: a.value };
  assert.deepEqual(
    await arenaEpoch(config, stores[0]!.storage, [fresh]),
    await referenceEpoch(config, stores[1]!.storage, [fresh]),
  );
  assertSameRecords(stores[0]!.db, stores[1]!.db);
  // inserting below B, which no version makes visible, fails identically
  const below = { label: new NodeLabel(b.label.val.slice(), 256), value: a.value };
  below.label.val[31]! ^= 1;
  const x = await errorOf(arenaEpoch(config, stores[0]!.storage, [below]));
  const y = await errorOf(referenceEpoch(config, stores[1]!.storage, [below]));
  assert.deepEqual(x, y);
  assert.equal(x.code, 'STORAGE_NOT_FOUND');
});

test('corrupt records are STORAGE_CORRUPT, and a child off the path of its parent DIRECTORY_TREE', async () => {
  const { stores, a, b } = await twoStores();
  const { db, storage } = stores[0]!;
  const original = (await db.get(nodeKey(b.label))) as TreeNodeRecord;
  const cases: [TreeNodeRecord, RegExp][] = [
    [{ ...original, latest: { ...original.latest, hash: new Uint8Array(31) } }, /31-byte hash/],
    [
      { ...original, latest: { ...original.latest, minDescendantEpoch: 1n << 60n } },
      /beyond 2\^53/,
    ],
  ];
  for (const [record, message] of cases) {
    await db.set(record);
    storage.flushCache();
    const e = await errorOf(arenaEpoch(config, storage, [a]));
    assert.equal(e.code, 'STORAGE_CORRUPT');
    assert.match(e.message, message);
  }
  // the root's right child claims a label on the left of the root
  const reference = stores[1]!;
  for (const { db, storage } of stores) {
    const root = (await db.get(nodeKey(NodeLabel.root()))) as TreeNodeRecord;
    const stray = { ...original, label: new NodeLabel(a.label.val.slice(), 256) };
    stray.label.val[0] = 0x20;
    await db.set({ ...stray, latest: { ...original.latest, label: stray.label } });
    await db.set({ ...root, latest: { ...root.latest, rightChild: stray.label } });
    storage.flushCache();
  }
  const above = { label: new NodeLabel(a.label.val.slice(), 256), value: a.value };
  above.label.val[0] = 0x20;
  above.label.val[31]! ^= 1;
  const x = await errorOf(
    arenaEpoch(config, storage, [
      above,
      { ...b, label: new NodeLabel(new Uint8Array(32).fill(0xf0), 256) },
    ]),
  );
  const y = await errorOf(
    referenceEpoch(config, reference.storage, [
      above,
      { ...b, label: new NodeLabel(new Uint8Array(32).fill(0xf0), 256) },
    ]),
  );
  assert.deepEqual(x, y);
  assert.equal(x.code, 'DIRECTORY_TREE');
});

test('a failure in a worker thread is the AkdError a serial insertion gives', async () => {
  const { stores, a, b } = await twoStores();
  for (const { db, storage } of stores) {
    const record = (await db.get(nodeKey(b.label))) as TreeNodeRecord;
    await db.set({ ...record, latest: { ...record.latest, lastEpoch: 9n }, previous: undefined });
    storage.flushCache();
  }
  const below = { label: new NodeLabel(b.label.val.slice(), 256), value: a.value };
  below.label.val[31]! ^= 1;
  const near = { label: new NodeLabel(a.label.val.slice(), 256), value: a.value };
  near.label.val[31]! ^= 1;
  const serial = await errorOf(arenaEpoch(config, stores[1]!.storage, [below, near]));
  const parallel = await errorOf(
    arenaEpoch(config, stores[0]!.storage, [below, near], {
      levels: undefined,
      maxBatchSize: 10,
      // one parallel level: both sides of the root are worker tasks
      insertion: Parallelism.static(2),
      minTaskSize: 1,
    }),
  );
  assert.deepEqual(parallel, serial);
  assert.equal(parallel.code, 'STORAGE_NOT_FOUND');
});

test('bad element sets and epochs past 2^53 are typed errors that log nothing', async () => {
  const t = await emptyTree(config);
  const bytes = randomBytes(3);
  const good = clusteredLeaves(bytes, 2, 1);
  const cases: [AzksElement[], RegExp][] = [
    [[good[0]!, good[0]!], /appears twice/],
    [[{ label: new NodeLabel(bytes(32), 255), value: bytes(32) }], /not a full-length leaf/],
    [[{ label: good[1]!.label, value: bytes(31) }], /value of 31 bytes/],
  ];
  for (const [elements, message] of cases) {
    const e = await errorOf(arenaEpoch(config, t.storage, elements));
    assert.equal(e.code, 'DIRECTORY_TREE');
    assert.match(e.message, message);
  }
  await t.storage.set({ kind: 'azks', latestEpoch: BigInt(Number.MAX_SAFE_INTEGER), numNodes: 1n });
  const e = await errorOf(arenaEpoch(config, t.storage, good));
  assert.equal(e.code, 'DIRECTORY_INVALID_EPOCH');
  assert.equal(t.db.allRecords().length, 2, 'only the root and the AZKS record');
});

test('an insertion logs one batch that the transaction reads, replaces and commits', async () => {
  const t = await emptyTree(config);
  const azks = new Azks(config);
  const elements = clusteredLeaves(randomBytes(4), 50, 2);
  const tx = t.storage.beginTransaction();
  const record = await azks.insert(tx, await azks.read(t.storage), elements, {
    levels: undefined,
    maxBatchSize: 10,
  });
  const nodes = Number(record.numNodes);
  assert.ok(nodes >= 99, 'the root, 50 leaves and the interior nodes above them');
  assert.equal(tx.size, nodes + 1, 'every node and the AZKS record');
  const root = tx.peekNode(NodeLabel.root())!;
  assert.equal(root.latest.lastEpoch, 1n);
  assert.equal((await tx.get(nodeKey(NodeLabel.root()))).latest, root.latest, 'one object');
  assert.equal((await tx.batchGet([nodeKey(elements[3]!.label)])).length, 1);
  // a later write of a node replaces the batch's record
  const leaf = tx.peekNode(elements[3]!.label)!;
  tx.set({ ...leaf, previous: leaf.latest });
  assert.equal(tx.size, nodes + 1);
  assert.equal(tx.peekNode(elements[3]!.label)!.previous, leaf.latest);
  assert.equal(tx.records().length, nodes + 1);
  await tx.commit();
  assert.equal(t.db.allRecords().length, nodes + 1);
  const stored = (await t.db.get(nodeKey(elements[3]!.label))) as TreeNodeRecord;
  assert.equal(stored.previous, leaf.latest);
});

test('the tree workers end only when no insertion holds them, and the next insertion starts new ones', async () => {
  const bytes = randomBytes(21);
  const epochs = [400, 250].map((n) => clusteredLeaves(bytes, n, 2));
  const reference = await emptyTree(config);
  const t = await emptyTree(config);
  const options: InsertOptions = {
    levels: 2,
    maxBatchSize: 50,
    insertion: Parallelism.static(2),
    minTaskSize: 1,
  };
  const pools: Piscina[] = [];
  for (const e of epochs) {
    await referenceEpoch(config, reference.storage, e);
    await arenaEpoch(config, t.storage, e, options);
    assertSameRecords(t.db, reference.db);
    const pool = await treeWorkers(false);
    assert.ok(pool !== undefined, 'the tree workers load from the sources');
    pools.push(pool);
    assert.ok(pool.threads.length > 0);
    // an insertion holding the pool keeps it
    const release = holdTreeWorkers();
    assert.equal(await endTreeWorkers(), false);
    assert.ok(pool.threads.length > 0);
    release();
    release(); // a second call changes nothing
    assert.equal(await endTreeWorkers(), true);
    assert.equal(pool.threads.length, 0, 'the ended pool has no thread left');
    assert.equal(await endTreeWorkers(), false, 'nothing left to end');
  }
  assert.notEqual(pools[0], pools[1], 'the second insertion started a new pool');
});
