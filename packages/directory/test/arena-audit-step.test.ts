// The audit step an insertion reads from its own arena (tree/arena/audit-step.ts) is byte for
// byte the proof the record walk reads back through the transaction, at every parallelism
// setting; where the arena lacks a node the proof needs, it declines and the walk decides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NodeLabel,
  configurationByName,
  encodeSingleAppendOnlyProof,
  isAkdError,
  type AzksElement,
  type Configuration,
} from '@akd-ts/core';
import { nodeKey, type StorageManager, type TreeNodeRecord } from '@akd-ts/storage';
import { Azks, Parallelism, type InsertOptions } from '@akd-ts/directory';
import { CONFIG_NAMES } from './support/build.js';
import {
  clusteredLeaves,
  emptyTree,
  leafStartingWith,
  randomBytes,
  referenceEpoch,
} from './support/differential.js';

/**
 * Inserts one epoch with `insertStep` and returns its step, with the record walk's proof of
 * the same step read from the same transaction before it commits (or the walk's error code).
 */
async function stepBothWays(
  config: Configuration,
  storage: StorageManager,
  elements: AzksElement[],
  options: InsertOptions,
): Promise<{ arena: Uint8Array | undefined; walk: Uint8Array | string }> {
  const azks = new Azks(config);
  const record = await azks.read(storage);
  const epoch = record.latestEpoch + 1n;
  const tx = storage.beginTransaction();
  try {
    const { step } = await azks.insertStep(tx, record, elements, options);
    let walk: Uint8Array | string;
    try {
      await azks.preloadAudit(tx, epoch - 1n, epoch, epoch, options);
      const proof = await azks.appendOnlyProof(tx, epoch - 1n, epoch, epoch);
      walk = encodeSingleAppendOnlyProof(proof.proofs[0]!);
    } catch (e) {
      if (!isAkdError(e)) throw e;
      walk = e.code;
    }
    await tx.commit();
    return { arena: step, walk };
  } finally {
    if (!tx.ended) await tx.rollback();
  }
}

for (const name of CONFIG_NAMES) {
  const config = configurationByName(name);

  test(`${name}: the arena's step is the record walk's proof, serial and on workers`, async () => {
    const settings: InsertOptions[] = [
      { levels: undefined, maxBatchSize: 7 },
      ...[1, 2, 4, 8].map((degree) => ({
        levels: 2,
        maxBatchSize: 50,
        insertion: Parallelism.static(degree),
        minTaskSize: 1 + (degree % 3) * 20,
      })),
    ];
    const steps: Uint8Array[][] = [];
    for (const options of settings) {
      const bytes = randomBytes(11);
      const taken = new Set<string>();
      const t = await emptyTree(config);
      const out: Uint8Array[] = [];
      // epochs of leaves in a few clusters each, which split edges at every depth
      for (const n of [1, 2, 40, 1500, 7, 300]) {
        const elements = clusteredLeaves(bytes, n, 1 + (n % 4), taken);
        const { arena, walk } = await stepBothWays(config, t.storage, elements, options);
        assert.ok(arena !== undefined, 'the arena holds every node of the step');
        assert.deepEqual(arena, walk);
        out.push(arena);
      }
      steps.push(out);
    }
    for (const s of steps.slice(1)) assert.deepEqual(s, steps[0], 'the same at every degree');
  });
}

const config = configurationByName('whatsapp_v1');

test('a sibling the arena has no version of: no arena step, and the walk reports the tree', async () => {
  const leaf = leafStartingWith(randomBytes(5));
  const a = leaf(0x10);
  const b = leaf(0x90);
  const t = await emptyTree(config);
  await referenceEpoch(config, t.storage, [a, b]);
  // B claims an epoch after the next one, with no earlier version: not visible at epoch 2
  const record = (await t.db.get(nodeKey(b.label))) as TreeNodeRecord;
  await t.db.set({ ...record, latest: { ...record.latest, lastEpoch: 9n }, previous: undefined });
  t.storage.flushCache();
  const near = { label: new NodeLabel(new Uint8Array(32).fill(0x12), 256), value: a.value };
  const { arena, walk } = await stepBothWays(config, t.storage, [near], {
    levels: undefined,
    maxBatchSize: 7,
  });
  assert.equal(arena, undefined);
  assert.equal(walk, 'STORAGE_NOT_FOUND');
});

test('a tree that already has nodes of the epoch being inserted: no arena step', async () => {
  const leaf = leafStartingWith(randomBytes(6));
  const a = leaf(0x10);
  const b = leaf(0x90);
  const t = await emptyTree(config);
  await referenceEpoch(config, t.storage, [a, leaf(0x11), b, leaf(0x91)]);
  // the interior node above A claims epoch 2: the step then descends below it, where the
  // insertion (which inserts only on the right) loaded nothing
  const root = (await t.db.get(nodeKey(NodeLabel.root()))) as TreeNodeRecord;
  const left = (await t.db.get(nodeKey(root.latest.leftChild!))) as TreeNodeRecord;
  await t.db.set({ ...left, latest: { ...left.latest, lastEpoch: 2n }, previous: left.latest });
  t.storage.flushCache();
  const right = { label: new NodeLabel(new Uint8Array(32).fill(0xf2), 256), value: a.value };
  const { arena, walk } = await stepBothWays(config, t.storage, [right], {
    levels: undefined,
    maxBatchSize: 7,
  });
  assert.equal(arena, undefined);
  assert.ok(walk instanceof Uint8Array, 'the walk reads what the insertion did not');
});

test('takeStep gets the step and the new root hash before the insertion logs its records', async () => {
  const bytes = randomBytes(12);
  const taken = new Set<string>();
  const t = await emptyTree(config);
  const azks = new Azks(config);
  const options: InsertOptions = { levels: undefined, maxBatchSize: 9 };
  for (const n of [3, 200]) {
    const record = await azks.read(t.storage);
    const epoch = record.latestEpoch + 1n;
    const tx = t.storage.beginTransaction();
    const calls: { step: Uint8Array; hash: Uint8Array; logged: number }[] = [];
    const { step } = await azks.insertStep(
      tx,
      record,
      clusteredLeaves(bytes, n, 2, taken),
      options,
      () => {},
      async (s, hash) => void calls.push({ step: s, hash, logged: tx.size }),
    );
    assert.equal(step, undefined, 'the step went to takeStep');
    assert.equal(calls.length, 1);
    assert.equal(calls[0]!.logged, 0, 'before any record of the epoch is logged');
    assert.ok(tx.size > n);
    assert.deepEqual(calls[0]!.hash, await azks.rootHash(tx, epoch));
    await azks.preloadAudit(tx, epoch - 1n, epoch, epoch, options);
    const proof = await azks.appendOnlyProof(tx, epoch - 1n, epoch, epoch);
    assert.deepEqual(calls[0]!.step, encodeSingleAppendOnlyProof(proof.proofs[0]!));
    await tx.commit();
  }

  // where the arena does not hold the step, takeStep is not called (the caller reads it)
  const leaf = leafStartingWith(randomBytes(13));
  const u = await emptyTree(config);
  const right = leaf(0x90);
  await referenceEpoch(config, u.storage, [leaf(0x10), right]);
  const b = (await u.db.get(nodeKey(right.label))) as TreeNodeRecord;
  await u.db.set({ ...b, latest: { ...b.latest, lastEpoch: 9n }, previous: undefined });
  u.storage.flushCache();
  const tx = u.storage.beginTransaction();
  let called = false;
  const near = { label: new NodeLabel(new Uint8Array(32).fill(0x12), 256), value: b.latest.hash };
  const { step } = await azks.insertStep(
    tx,
    await azks.read(u.storage),
    [near],
    options,
    () => {},
    async () => void (called = true),
  );
  await tx.rollback();
  assert.equal(step, undefined);
  assert.equal(called, false);
});
