// Collection of node versions in a store of the versions layout: after epochs of new labels
// and updates, exactly the versions that no walk from the roots of the latest epoch and the
// one before reaches are deleted, proofs and later publishes are byte for byte those of a
// store that kept everything, and a run stopped part way (a writer that lost its lock)
// resumes without leaving a version behind.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { AkdError, NodeLabel, isAkdError, utf8 } from '@akd-ts/core';
import {
  COLLECTED_THROUGH_SETTING,
  MemoryDatabase,
  collectNodeVersions,
  collectedThrough,
  type Database,
  type TreeNode,
} from '@akd-ts/storage';
import {
  VRF_PROOFS_THROUGH_SETTING,
  checkStoredDirectory,
  collectStoreVersions,
  oldestServedEpoch,
} from '@akd-ts/directory';
import { testStores } from '../../../test/support/stores.js';
import { openDirectory, type TestDirectory } from './support/build.js';

const stores = testStores().filter((s) => s.name.endsWith('-versions'));
after(async () => {
  for (const s of stores) await s.cleanup();
});

const label = (i: number) => utf8(`user-${i}`);

/** Epochs of new labels and updates: [first new label, new labels, updated labels]. */
const EPOCHS: [number, number, number[]][] = [
  [0, 40, []],
  [40, 10, [0, 3, 5, 7, 11, 13, 17, 19, 23, 29]],
  [50, 0, [0, 1, 2, 3, 4, 40, 41, 42, 43, 44, 45, 46]],
  [50, 5, [5, 6, 7, 8, 0]],
  [55, 0, [9, 10, 11, 12, 13, 14, 15, 16, 0, 1]],
];

async function publishEpoch(t: TestDirectory, e: number): Promise<void> {
  const [first, count, updated] = EPOCHS[e]!;
  const updates = [
    ...Array.from({ length: count }, (_, i) => ({
      label: label(first + i),
      value: utf8(`v${e}-${first + i}`),
    })),
    ...updated.map((i) => ({ label: label(i), value: utf8(`v${e}-${i}`) })),
  ];
  await t.dir.publish(updates);
  await t.dir.vrfProofsStored();
}

const key = (label: NodeLabel, epoch: bigint) => `${label.key}@${epoch}`;

/** Every version a walk from the root of `epoch` reaches, by `key`. */
async function reachable(db: Database, epoch: bigint): Promise<Map<string, TreeNode>> {
  const found = new Map<string, TreeNode>();
  let level: [NodeLabel, bigint][] = [[NodeLabel.root(), epoch]];
  while (level.length > 0) {
    const got = await db.batchGetNodeVersions!(
      level.map(([l]) => l),
      level.map(([, e]) => e),
    );
    const next: [NodeLabel, bigint][] = [];
    got.forEach((r, i) => {
      assert.ok(r !== undefined, `version ${level[i]![0]} of epoch ${level[i]![1]} is stored`);
      const n = r.latest;
      found.set(key(n.label, n.lastEpoch), n);
      if (n.leftChild !== undefined) next.push([n.leftChild, n.leftEpoch!]);
      if (n.rightChild !== undefined) next.push([n.rightChild, n.rightEpoch!]);
    });
    level = next;
  }
  return found;
}

/** Which of `versions` the store still holds, by `key`. */
async function stillStored(db: Database, versions: Map<string, TreeNode>): Promise<Set<string>> {
  const all = [...versions.values()];
  const got = await db.batchGetNodeVersions!(
    all.map((n) => n.label),
    all.map((n) => n.lastEpoch),
  );
  return new Set(all.filter((_, i) => got[i] !== undefined).map((n) => key(n.label, n.lastEpoch)));
}

/** Every version epochs 0..latest wrote (each is reachable from its own epoch's root). */
async function everyVersion(db: Database, latest: bigint): Promise<Map<string, TreeNode>> {
  const all = new Map<string, TreeNode>();
  for (let e = 0n; e <= latest; e++) for (const [k, n] of await reachable(db, e)) all.set(k, n);
  return all;
}

/** What a reader serves: lookups and histories of every label, as bytes to compare. */
async function served(t: TestDirectory, labels: number): Promise<string> {
  const out: unknown[] = [];
  for (let i = 0; i < labels; i++) {
    out.push(await t.dir.lookup(label(i)));
    out.push(await t.dir.keyHistory(label(i)));
  }
  return JSON.stringify(out, (_, v: unknown) =>
    v instanceof Uint8Array ? Buffer.from(v).toString('hex') : typeof v === 'bigint' ? `${v}` : v,
  );
}

describe('collection of node versions no served walk reaches', () => {
  for (const store of stores) {
    test(
      `${store.name}: deletes exactly what the latest two roots do not reach`,
      {
        skip: store.skip,
      },
      async () => {
        const db = await store.open();
        assert.ok(db.deleteNodeVersions !== undefined, `${store.name} deletes versions`);
        const collected = await openDirectory('whatsapp_v1', { db });
        const kept = await openDirectory('whatsapp_v1', {
          db: new MemoryDatabase({ nodeLayout: 'versions' }),
        });
        try {
          for (let e = 0; e < EPOCHS.length; e++) {
            await publishEpoch(collected, e);
            await publishEpoch(kept, e);
          }
          const latest = BigInt(EPOCHS.length);
          const all = await everyVersion(db, latest);
          const live = new Set([
            ...(await reachable(db, latest)).keys(),
            ...(await reachable(db, latest - 1n)).keys(),
          ]);
          assert.ok(all.size > live.size + 50, `${all.size} versions, ${live.size} reachable`);
          const before = await served(collected, 55);

          const seen: bigint[] = [];
          const run = await collected.dir.collectNodeVersions({
            onProgress: (p) => seen.push(p.epoch),
          });
          assert.deepEqual(seen, [1n, 2n, 3n, 4n]);
          assert.deepEqual(
            { epochs: run.epochs, from: run.from, through: run.through, stopped: run.stopped },
            { epochs: 4, from: 1n, through: latest - 1n, stopped: false },
          );
          assert.equal(run.deleted, all.size - live.size);
          assert.deepEqual(await stillStored(db, all), live);
          assert.equal(await collectedThrough(db), latest - 1n);
          collected.storage.flushCache();
          assert.equal(await served(collected, 55), before, 'proofs are those served before');
          // the full check walks every node of the served tree, and the root's previous version
          const report = await checkStoredDirectory(collected.config, db, { full: true });
          assert.equal(report.latestEpoch, latest);

          // nothing more to do until the next epoch; then what it made unreachable goes
          assert.equal((await collected.dir.collectNodeVersions()).epochs, 0);
          await publishEpoch(collected, 1);
          await publishEpoch(kept, 1);
          assert.deepEqual(await collected.dir.getEpochHash(), await kept.dir.getEpochHash());
          const again = await collected.dir.collectNodeVersions();
          assert.equal(again.epochs, 1);
          assert.ok(again.deleted > 0);
          const next = latest + 1n;
          const nowLive = new Set([
            ...(await reachable(db, next)).keys(),
            ...(await reachable(db, latest)).keys(),
          ]);
          const allNow = await everyVersion(kept.db, next);
          assert.deepEqual(await stillStored(db, allNow), nowLive);
          collected.storage.flushCache();
          assert.equal(await served(collected, 55), await served(kept, 55));
        } finally {
          await collected.dir.close();
          await kept.dir.close();
        }
      },
    );
  }

  test('a run stopped part way resumes, and leaves no version behind', async () => {
    const t = await openDirectory('whatsapp_v1', {
      db: new MemoryDatabase({ nodeLayout: 'versions' }),
    });
    try {
      for (let e = 0; e < EPOCHS.length; e++) await publishEpoch(t, e);
      const latest = BigInt(EPOCHS.length);
      const all = await everyVersion(t.db, latest);
      const live = new Set([
        ...(await reachable(t.db, latest)).keys(),
        ...(await reachable(t.db, latest - 1n)).keys(),
      ]);
      // stop after every few deletions of three versions, in the middle of epochs
      let total = 0;
      for (let stops = 0; ; stops++) {
        let calls = 0;
        const r = await collectNodeVersions(t.db, {
          through: latest - 1n,
          chunk: 3,
          mayWrite: () => ++calls <= 4,
        });
        total += r.deleted;
        if (!r.stopped) {
          assert.ok(stops > 3, `stopped ${stops} times`);
          break;
        }
      }
      assert.deepEqual(await stillStored(t.db, all), live);
      assert.equal(total, all.size - live.size, 'the runs deleted each version once');
      assert.equal(await t.db.getSetting(COLLECTED_THROUGH_SETTING), `${latest - 1n}`);
    } finally {
      await t.dir.close();
    }
  });

  test('a store is collected without its writer and key, never past the proofs mark', async () => {
    const db = new MemoryDatabase({ nodeLayout: 'versions' });
    assert.equal(await oldestServedEpoch(db), -1n);
    assert.equal((await collectStoreVersions(db)).epochs, 0);
    const t = await openDirectory('whatsapp_v1', { db });
    for (let e = 0; e < EPOCHS.length; e++) await publishEpoch(t, e);
    // the writer holds the lock: a collection beside it is refused
    await assert.rejects(collectStoreVersions(db), (e) => isAkdError(e, 'STORAGE_LOCKED'));
    await t.dir.close();
    // readers without the key serve epoch 2 until the writer stores later proofs
    await db.setSetting(VRF_PROOFS_THROUGH_SETTING, '2');
    assert.equal(await oldestServedEpoch(db), 2n);
    const epochs: bigint[] = [];
    const r = await collectStoreVersions(db, { onProgress: (p) => epochs.push(p.epoch) });
    assert.deepEqual(epochs, [1n, 2n]);
    assert.equal(r.stopped, false);
    await db.setSetting(VRF_PROOFS_THROUGH_SETTING, `${EPOCHS.length}`);
    assert.equal(await oldestServedEpoch(db), BigInt(EPOCHS.length - 1));
    const rest = await collectStoreVersions(db);
    assert.deepEqual([rest.from, rest.through, rest.epochs], [3n, 4n, 2]);
    // the lock was released: a writer opens again
    const again = await openDirectory('whatsapp_v1', { db });
    await again.dir.close();
  });

  test('a collection that loses the writer lock stops before its next deletion', async () => {
    const db = new MemoryDatabase({ nodeLayout: 'versions' });
    const t = await openDirectory('whatsapp_v1', { db });
    for (let e = 0; e < EPOCHS.length; e++) await publishEpoch(t, e);
    await t.dir.close();
    // a lock that is lost after its third look, as a PostgreSQL connection can lose it
    let looks = 0;
    const acquire = db.acquireWriterLock.bind(db);
    db.acquireWriterLock = async () => {
      const lock = await acquire();
      return {
        release: () => lock.release(),
        status: () => ({ held: ++looks <= 3, generation: 0, final: looks > 3 }),
      };
    };
    await assert.rejects(
      collectStoreVersions(db),
      (e) => isAkdError(e, 'STORAGE_LOCKED') && /run again to resume/.test(e.message),
    );
    assert.ok(looks > 3);
    assert.ok((await collectedThrough(db)) < BigInt(EPOCHS.length - 1));
    looks = -1_000_000;
    const rest = await collectStoreVersions(db);
    assert.equal(rest.through, BigInt(EPOCHS.length - 1));
  });

  test('an epoch that replaced hundreds of versions of one depth is collected whole', async () => {
    const t = await openDirectory('whatsapp_v1', {
      db: new MemoryDatabase({ nodeLayout: 'versions' }),
    });
    try {
      const all = Array.from({ length: 600 }, (_, i) => label(i));
      await t.dir.publish(all.map((l) => ({ label: l, value: utf8('a') })));
      await t.dir.publish(all.map((l) => ({ label: l, value: utf8('b') })));
      await t.dir.publish([{ label: label(0), value: utf8('c') }]);
      const versions = await everyVersion(t.db, 3n);
      const live = new Set([
        ...(await reachable(t.db, 3n)).keys(),
        ...(await reachable(t.db, 2n)).keys(),
      ]);
      const r = await t.dir.collectNodeVersions();
      assert.equal(r.deleted, versions.size - live.size);
      assert.ok(r.deleted > 400, `${r.deleted} versions`);
      assert.deepEqual(await stillStored(t.db, versions), live);
    } finally {
      await t.dir.close();
    }
  });

  test('a storage failure while the bound is read reaches the caller', async () => {
    const db = new MemoryDatabase({ nodeLayout: 'versions' });
    db.get = () => Promise.reject(new AkdError('STORAGE_CONNECTION', 'gone'));
    await assert.rejects(oldestServedEpoch(db), (e) => isAkdError(e, 'STORAGE_CONNECTION'));
  });

  test('a store of records, or a corrupt setting, is refused', async () => {
    const t = await openDirectory('whatsapp_v1');
    try {
      await publishEpoch(t, 0);
      await assert.rejects(t.dir.collectNodeVersions(), RangeError);
    } finally {
      await t.dir.close();
    }
    const db = new MemoryDatabase({ nodeLayout: 'versions' });
    await db.setSetting(COLLECTED_THROUGH_SETTING, 'seven');
    await assert.rejects(
      collectNodeVersions(db, { through: 3n }),
      (e) => isAkdError(e, 'STORAGE_CORRUPT') && /holds "seven", not an epoch/.test(e.message),
    );
  });
});
