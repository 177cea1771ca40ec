/**
 * Writing audit blobs (spec 16) into the store: the blob of each epoch step is built by the
 * publish of that epoch, from its transaction before it commits, when the step is the latest
 * one and its proof is the smallest it will ever be (a step proven later carries the subtrees
 * later insertions split). Stores that predate stored blobs are filled in one step at a time.
 */

import { encodeSingleAppendOnlyProof, type Digest } from '@akd-ts/core';
import type { AuditBlobRecord, RecordReader } from '@akd-ts/storage';
import type { DirectoryContext } from '../context.js';
import { parallelLevels } from '../parallelism.js';

/**
 * The audit blob of the step `epoch - 1 -> epoch`, read through `reader` at `epoch` (a
 * publish's transaction after its insertion, so that every node it reads is in memory), for
 * the publish whose insertion could not build the step from its own nodes (azks.ts
 * `insertStep`).
 *
 * @example const blob = await stepAuditBlob(ctx, tx, 5n, rootAt4, rootAt5);
 */
export async function stepAuditBlob(
  ctx: DirectoryContext,
  reader: RecordReader,
  epoch: bigint,
  previousHash: Digest,
  currentHash: Digest,
): Promise<AuditBlobRecord> {
  const { azks, parallelism, maxPreloadBatch } = ctx;
  // the insertion read the paths it changed; this reads the unchanged siblings it did not
  await azks.preloadAudit(reader, epoch - 1n, epoch, epoch, {
    levels: parallelLevels(parallelism.preload),
    maxBatchSize: maxPreloadBatch,
  });
  const proof = await azks.appendOnlyProof(reader, epoch - 1n, epoch, epoch);
  return { epoch, previousHash, currentHash, data: encodeSingleAppendOnlyProof(proof.proofs[0]!) };
}

/**
 * The epochs in `[1, latest]` whose step has no stored blob, oldest first, read in chunks of
 * `chunk` epochs.
 *
 * @example await missingAuditBlobs(storage.db, 12n) // [] once every step is stored
 */
export async function missingAuditBlobs(
  db: { getAuditBlobInfos(epochs: bigint[]): Promise<{ epoch: bigint }[]> },
  latest: bigint,
  chunk = 10_000,
): Promise<bigint[]> {
  const missing: bigint[] = [];
  for (let first = 1n; first <= latest; first += BigInt(chunk)) {
    const epochs: bigint[] = [];
    for (let e = first; e <= latest && e < first + BigInt(chunk); e++) epochs.push(e);
    const stored = new Set((await db.getAuditBlobInfos(epochs)).map((i) => i.epoch));
    for (const e of epochs) if (!stored.has(e)) missing.push(e);
  }
  return missing;
}
