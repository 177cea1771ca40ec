/**
 * Trees of pseudo-random leaves for preload and walk tests: the same seed gives the same
 * labels, so a test can name a leaf by its index and build the tree again elsewhere.
 */

import { NodeLabel, WhatsAppV1Configuration, type AzksElement } from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Azks } from '@akd-ts/directory';

/** `n` full-length leaves from a linear congruential sequence seeded with `seed`. */
export function randomLeaves(n: number, seed: number): AzksElement[] {
  let x = seed;
  const next = () => (x = (x * 1103515245 + 12345) >>> 0);
  return Array.from({ length: n }, () => {
    const val = new Uint8Array(32);
    for (let i = 0; i < 32; i += 4) new DataView(val.buffer).setUint32(i, next());
    return { label: new NodeLabel(val, 256), value: new Uint8Array(32).fill(seed & 0xff) };
  });
}

/** Inserts `batches` into `storage` as epochs 1, 2, ... of a new whatsapp_v1 tree. */
export async function growTree(storage: StorageManager, batches: AzksElement[][]): Promise<Azks> {
  const azks = new Azks(new WhatsAppV1Configuration());
  let record = await azks.create(storage);
  for (const batch of batches) {
    const tx = storage.beginTransaction();
    record = await azks.insert(tx, record, batch, { levels: undefined, maxBatchSize: 1000 });
    await tx.commit();
  }
  return azks;
}

/** A tree of `elements` inserted at epoch 1 into a memory store, and its storage manager. */
export async function treeOf(
  elements: AzksElement[],
): Promise<{ storage: StorageManager; azks: Azks }> {
  const storage = new StorageManager(new MemoryDatabase());
  const azks = await growTree(storage, [elements]);
  return { storage, azks };
}
