/**
 * A reader keeps its cache across epochs (`ReadOnlyDirectory.refresh` drops only the AZKS
 * record and the root): every walk checks each child it reads against the write epoch its
 * parent records (`TreeNode.leftEpoch`), and reads again from the store a node a later epoch
 * rewrote. Its proofs stay those of a reader with a cold cache, byte for byte; a store that no
 * longer holds the version a parent records is `STORAGE_NOT_FOUND`, never a wrong proof.
 */

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NodeLabel,
  WhatsAppV1Configuration,
  encodeAppendOnlyProof,
  encodeMembershipProof,
  encodeNonMembershipProof,
  toHex,
  utf8,
  type AzksElement,
} from '@akd-ts/core';
import {
  AZKS_KEY,
  MemoryDatabase,
  StorageManager,
  nodeKey,
  type Database,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { Azks, type Directory } from '@akd-ts/directory';
import { randomLeaves } from './support/seeded-tree.js';
import { keylessReader, openDirectory } from './support/build.js';
import { assertSameProofs } from './support/same-proofs.js';
import { testStores } from '../../../test/support/stores.js';

const config = new WhatsAppV1Configuration();
const ROOT = NodeLabel.root();
const PRELOAD = { levels: undefined, maxBatchSize: 1000 };

/**
 * A memory store whose reads that bypass a cache (`batchGetNodes`, `batchGetSubtrees`) answer
 * from the records it held when `freeze` was called, but for the root: a store that lost the
 * versions a newer root points to.
 */
class FrozenNodes extends MemoryDatabase {
  #frozen: Map<string, TreeNodeRecord> | undefined;
  #nodes(): Map<string, TreeNodeRecord> {
    const nodes = this.allRecords().filter((r): r is TreeNodeRecord => r.kind === 'treeNode');
    return new Map(nodes.map((r) => [r.label.key, r]));
  }
  freeze(): void {
    this.#frozen = this.#nodes();
  }
  override async batchGetNodes(
    labels: readonly NodeLabel[],
  ): Promise<(TreeNodeRecord | undefined)[]> {
    const current = await super.batchGetNodes(labels);
    if (this.#frozen === undefined) return current;
    return labels.map((l, i) => (l.len === 0 ? current[i] : this.#frozen!.get(l.key)));
  }
  /** Every node below `labels` (more than a walk needs: the preload takes what it walks to). */
  async batchGetSubtrees(labels: readonly NodeLabel[]): Promise<TreeNodeRecord[]> {
    const every = [...(this.#frozen ?? this.#nodes()).values()];
    return every.filter((r) => labels.some((l) => l.isPrefixOf(r.label)));
  }
}

/** A tree of two epochs, readers whose caches hold all of it, then a third epoch. */
async function staleReaders(db: MemoryDatabase, readers: number, beforeThird = () => {}) {
  const writer = new StorageManager(db);
  const azks = new Azks(config);
  let record = await azks.create(writer);
  const insert = async (batch: AzksElement[]) => {
    const tx = writer.beginTransaction();
    record = await azks.insert(tx, record, batch, PRELOAD);
    await tx.commit();
  };
  const old = randomLeaves(300, 11);
  await insert(old.slice(0, 200));
  await insert(old.slice(200));
  // targets present and absent; every node on their paths cached as of epoch 2
  const targets = [
    ...old.slice(0, 40).map((e) => e.label),
    ...randomLeaves(10, 12).map((e) => e.label),
  ];
  const cached = [];
  for (let i = 0; i < readers; i++) {
    const storage = new StorageManager(db);
    await azks.preloadFor(storage, targets, 2n, PRELOAD);
    cached.push(storage);
  }
  beforeThird();
  await insert(randomLeaves(150, 13));
  // what refresh drops at a new epoch
  for (const storage of cached) storage.forgetCached([AZKS_KEY, nodeKey(ROOT)]);
  return { azks, targets, cached };
}

const hex = (b: Uint8Array) => toHex(b);

test('walks without a preload read again what a later epoch rewrote', async () => {
  const db = new MemoryDatabase();
  const { azks, targets, cached } = await staleReaders(db, 1);
  const reader = cached[0]!;
  const cold = new StorageManager(db);
  const before = reader.metrics.dbBatchGets;
  for (const label of targets.slice(0, 40)) {
    assert.equal(
      hex(encodeMembershipProof(await azks.membershipProof(reader, label, 3n))),
      hex(encodeMembershipProof(await azks.membershipProof(cold, label, 3n))),
    );
  }
  for (const label of targets.slice(40)) {
    assert.equal(
      hex(encodeNonMembershipProof(await azks.nonMembershipProof(reader, label, 3n))),
      hex(encodeNonMembershipProof(await azks.nonMembershipProof(cold, label, 3n))),
    );
  }
  assert.ok(reader.metrics.dbBatchGets > before, 'stale nodes were read again');
  assert.equal(
    hex(encodeAppendOnlyProof(await azks.appendOnlyProof(reader, 2n, 3n, 3n))),
    hex(encodeAppendOnlyProof(await azks.appendOnlyProof(cold, 2n, 3n, 3n))),
  );
});

test('a preload reads again what a later epoch rewrote, level by level and by subtrees', async () => {
  for (const subtrees of [false, true]) {
    const db = subtrees ? new FrozenNodes() : new MemoryDatabase();
    const { azks, targets, cached } = await staleReaders(db, 1);
    const reader = cached[0]!;
    assert.equal(reader.readsSubtrees(), subtrees);
    const cacheBefore = reader.cacheSize;
    await azks.preloadFor(reader, targets, 3n, PRELOAD);
    assert.ok(reader.cacheSize >= cacheBefore, 'the cache kept its records');
    const cold = new StorageManager(db);
    for (const label of targets.slice(0, 40)) {
      assert.equal(
        hex(encodeMembershipProof(await azks.membershipProof(reader, label, 3n))),
        hex(encodeMembershipProof(await azks.membershipProof(cold, label, 3n))),
        `subtrees ${subtrees}`,
      );
    }
  }
});

test('a store without the version a parent records is STORAGE_NOT_FOUND, never an old proof', async () => {
  const notFound = (e: unknown) =>
    e instanceof Error &&
    (e as { code?: string }).code === 'STORAGE_NOT_FOUND' &&
    /its parent records the version written in epoch \d+, the store holds that of epoch \d+/.test(
      e.message,
    );
  // the store's direct reads answer as of epoch 2, though the root is of epoch 3
  const db = new FrozenNodes();
  const { azks, targets, cached } = await staleReaders(db, 3, () => db.freeze());
  const [walk, levels, subtrees] = cached as [StorageManager, StorageManager, StorageManager];
  await assert.rejects(azks.membershipProof(walk, targets[0]!, 3n), notFound);
  const byLevel = new Proxy(levels, {
    get(t, p) {
      if (p === 'readsSubtrees') return () => false;
      const v = Reflect.get(t, p, t) as unknown;
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
  await assert.rejects(azks.preloadFor(byLevel, targets, 3n, PRELOAD), notFound);
  // a subtree read that answers a stale node where the cache had set one aside (below the
  // root of epoch 3, which the store's single reads still give)
  await subtrees.get(nodeKey(ROOT));
  await assert.rejects(azks.preloadFor(subtrees, targets, 3n, PRELOAD), notFound);
});

const stores = testStores();
after(async () => {
  for (const s of stores) await s.cleanup();
});

for (const store of stores) {
  test(
    `${store.name}: a reader keeps its cache across epochs and proves what the writer proves`,
    {
      skip: store.skip,
    },
    async () => {
      const db = await store.open();
      const { dir } = await openDirectory('whatsapp_v1', { db });
      const reader = await keylessReader(dir, db);
      const storage = reader.storage;
      try {
        const labels = Array.from({ length: 200 }, (_, i) => utf8(`user-${i}`));
        const asked = labels.filter((_, i) => i % 5 === 0);
        for (let epoch = 1; epoch <= 4; epoch++) {
          const changed = labels.filter((_, i) => epoch === 1 || i % 4 === epoch % 4);
          await dir.publish(changed.map((label) => ({ label, value: utf8(`v${epoch}`) })));
          await dir.vrfProofsStored();
          const cachedBefore = storage.cacheSize;
          await reader.refresh();
          assert.equal((await reader.getEpochHash()).epoch, BigInt(epoch));
          // only the AZKS record and the root are dropped
          assert.ok(storage.cacheSize >= cachedBefore - 2, `epoch ${epoch}: cache kept`);
          await assertSameProofs(dir, reader, asked, `${store.name}, epoch ${epoch}`);
        }
      } finally {
        await reader.close();
        await dir.close();
      }
    },
  );
}

test('a store that took another history or went back, or cannot show it did not, flushes the cache', async () => {
  // two directories with one key publish the same labels with other values: the same node
  // labels at the same epochs, other hashes
  const [a, b] = [new MemoryDatabase(), new MemoryDatabase()];
  let target: Database = a;
  const db = new Proxy(a, {
    get(_, p) {
      const v = Reflect.get(target, p, target) as unknown;
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const { dir: dirA } = await openDirectory('whatsapp_v1', { db: a });
  const { dir: dirB } = await openDirectory('whatsapp_v1', { db: b });
  const labels = Array.from({ length: 120 }, (_, i) => utf8(`user-${i}`));
  const asked = labels.slice(0, 40);
  const publish = async (dir: Directory, value: string, some = labels) => {
    await dir.publish(some.map((label) => ({ label, value: utf8(value) })));
    await dir.vrfProofsStored();
  };
  for (const epoch of [1, 2]) {
    await publish(dirA, `a${epoch}`);
    await publish(dirB, `b${epoch}`);
  }
  await publish(dirB, 'b3', labels.slice(0, 60));
  const reader = await keylessReader(dirA, db);
  const storage = reader.storage;
  const sameAs = (dir: Directory, what: string) => assertSameProofs(dir, reader, asked, what);
  await sameAs(dirA, 'history a, epoch 2');
  target = b;
  await sameAs(dirB, 'history b, epoch 3: its blob of epoch 3 starts at another root');
  target = a;
  await sameAs(dirA, 'back to epoch 2');
  // history a moves on by two epochs; the root cached again keeps no version of epoch 2
  await publish(dirA, 'a3', labels.slice(60));
  await publish(dirA, 'a4', labels.slice(60));
  storage.forgetCached([nodeKey(ROOT)]);
  await storage.get(nodeKey(ROOT));
  await sameAs(dirA, 'a root without the epoch seen');
  // a store without audit blobs cannot show that its history goes on
  const noBlobs = new Proxy(a, {
    get(t, p) {
      if (p === 'getAuditBlobInfos') return async () => [];
      const v = Reflect.get(t, p, t) as unknown;
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
  target = noBlobs;
  await publish(dirA, 'a5', labels.slice(0, 60));
  assert.ok(storage.cacheSize > 0);
  await reader.refresh();
  assert.equal(storage.cacheSize, 0, 'the cache was flushed');
  await sameAs(dirA, 'no blob');
  await reader.close();
  await dirA.close();
  await dirB.close();
});
