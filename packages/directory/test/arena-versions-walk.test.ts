// An insertion into a store of versions keeps no record bytes for the nodes it rewrites: the
// commit builds them from the arena and writes no previous copy. Its roots are those of a
// store of records, epoch after epoch, through splits that push nodes down (written for a new
// parent: their bytes are kept) and a root that is rewritten every epoch (its parent is in its
// record only).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { configurationByName, toHex } from '@akd-ts/core';
import { StorageManager, type NodeRecordBatch, type TreeNodeRecord } from '@akd-ts/storage';
import { Azks } from '@akd-ts/directory';
import { clusteredLeaves, emptyTree, randomBytes } from './support/differential.js';
import { testStores } from '../../../test/support/stores.js';

const config = configurationByName('whatsapp_v1');
const stores = testStores().filter((s) => s.name === 'sqlite-versions');
after(async () => {
  for (const s of stores) await s.cleanup();
});

for (const store of stores) {
  test(`${store.name}: an insertion keeps no bytes of the nodes it rewrites, and roots match`, async () => {
    const db = await store.open();
    const storage = new StorageManager(db);
    assert.equal(storage.readsNodeBytes(), true, 'a walk over bytes');
    const azks = new Azks(config);
    await azks.create(storage);
    const reference = await emptyTree(config);
    const leaves = clusteredLeaves(randomBytes(29), 600, 12);
    const written: TreeNodeRecord[][] = [];
    let totalReads = 0;
    for (let epoch = 1; epoch <= 6; epoch++) {
      const part = leaves.slice((epoch - 1) * 100, epoch * 100);
      for (const [s, versions] of [
        [storage, true],
        [reference.storage, false],
      ] as const) {
        const record = await azks.read(s);
        const tx = s.beginTransaction();
        const log = tx.logNodeBatch.bind(tx);
        tx.logNodeBatch = (batch: NodeRecordBatch) => {
          if (versions) written.push(batch.records());
          log(batch);
        };
        const stats = { levels: 0, reads: 0 };
        let collectCalls = 0;
        await azks.insert(tx, record, part, {
          levels: undefined,
          maxBatchSize: 7,
          storeKeepsVersions: versions,
          stats,
          collectGarbage: () => collectCalls++,
        });
        totalReads += stats.reads;
        assert.equal(collectCalls, stats.reads, 'asked after every batched read');
        await tx.commit();
      }
      const [ours, theirs] = await Promise.all([
        azks.rootHash(storage, BigInt(epoch)),
        azks.rootHash(reference.storage, BigInt(epoch)),
      ]);
      assert.equal(toHex(ours), toHex(theirs), `root of epoch ${epoch}`);
      storage.flushCache();
    }
    assert.ok(totalReads > 10, `${totalReads} batched reads`);
    const records = written.flat();
    assert.ok(records.length > 600, `${records.length} records written`);
    assert.ok(
      records.every((r) => r.previous === undefined),
      'no previous copy built',
    );
    // nodes pushed down by a split are written unchanged (an older write epoch), from their
    // kept bytes, as the records the reference wrote for them
    const unchanged = written.flatMap((batch, i) =>
      batch.filter((r) => r.latest.lastEpoch < BigInt(i + 1)),
    );
    assert.ok(unchanged.length > 0, 'some nodes written for a new parent only');
  });
}
