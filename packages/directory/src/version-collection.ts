/**
 * Collection of the node versions no reader reaches any more, in a store of the versions
 * layout (storage's version-collection.ts finds and deletes them). Readers serve the latest
 * epoch or the one before it, and a reader without the VRF key serves the epoch whose proofs
 * are stored (epoch-proofs.ts), at most one behind: what the epochs up to the older of those
 * replaced can go, as a store of records keeps a node's latest version and the one before it.
 * Collecting writes the store, so it holds the writer lock; it never needs the VRF key.
 */

import { AkdError, isAkdError } from '@akd-ts/core';
import {
  AZKS_KEY,
  collectNodeVersions,
  type Collected,
  type CollectionProgress,
  type Database,
} from '@akd-ts/storage';
import { proofsThrough } from './vrf/epoch-proofs.js';

/** The oldest epoch a reader may serve: one before the latest, or the proofs' mark if older. */
export async function oldestServedEpoch(db: Database): Promise<bigint> {
  let latest: bigint;
  try {
    latest = (await db.get(AZKS_KEY)).latestEpoch;
  } catch (e) {
    if (isAkdError(e, 'STORAGE_NOT_FOUND')) return -1n; // nothing published yet
    throw e;
  }
  const mark = await proofsThrough(db);
  return mark !== undefined && mark < latest - 1n ? mark : latest - 1n;
}

/**
 * Collects `db`'s unreachable node versions under its writer lock, taken here and released
 * after. A run that loses the lock stops before its next deletion; the next run resumes.
 * @throws AkdError `STORAGE_LOCKED` while a writer holds the lock, or once the run lost it;
 * RangeError for a store of records
 */
export async function collectStoreVersions(
  db: Database,
  options: { onProgress?: (progress: CollectionProgress) => void } = {},
): Promise<Collected> {
  const lock = await db.acquireWriterLock();
  try {
    const generation = lock.status?.().generation ?? 0;
    const mayWrite = () => {
      const status = lock.status?.();
      return status === undefined || (status.held && status.generation === generation);
    };
    const done = await collectNodeVersions(db, {
      through: await oldestServedEpoch(db),
      mayWrite,
      ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
    });
    if (done.stopped) {
      throw new AkdError(
        'STORAGE_LOCKED',
        `the writer lock was lost after ${done.deleted} node versions were deleted: run again to resume`,
      );
    }
    return done;
  } finally {
    await lock.release();
  }
}
