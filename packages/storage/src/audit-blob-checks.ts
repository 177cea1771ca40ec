/**
 * Checks every driver applies to audit blobs before storing one, so that a caller's mistake
 * is the same TypeError or RangeError whichever store it writes to, and nothing is written.
 */

import type { AuditBlobRecord } from './database.js';

/** The largest epoch every driver stores (SQL drivers use signed 64-bit columns). */
const MAX_STORED = (1n << 63n) - 1n;

/**
 * Throws unless `blob` is a storable audit blob: epoch 1 to 2^63 - 1, 32-byte hashes, bytes.
 *
 * @example checkAuditBlob({ epoch: 1n, previousHash, currentHash, data })
 */
export function checkAuditBlob(blob: AuditBlobRecord): void {
  if (typeof blob?.epoch !== 'bigint') throw new TypeError('blob.epoch must be a bigint');
  if (blob.epoch < 1n || blob.epoch > MAX_STORED) {
    throw new RangeError(
      `blob.epoch must be 1 to 2^63 - 1 (a step's end epoch), not ${blob.epoch}`,
    );
  }
  for (const field of ['previousHash', 'currentHash'] as const) {
    if (!(blob[field] instanceof Uint8Array)) throw new TypeError(`blob.${field} must be bytes`);
    if (blob[field].length !== 32) {
      throw new RangeError(`blob.${field} must have 32 bytes, not ${blob[field].length}`);
    }
  }
  if (!(blob.data instanceof Uint8Array)) throw new TypeError('blob.data must be bytes');
}

/**
 * Throws unless `epochs` are bigints; returns those a driver can hold (0 to 2^63 - 1),
 * deduplicated and ascending (others cannot be stored, so they are missing).
 *
 * @example storableEpochs([3n, 1n, 3n]) // [1n, 3n]
 */
export function storableEpochs(epochs: bigint[]): bigint[] {
  for (const e of epochs) if (typeof e !== 'bigint') throw new TypeError('epochs must be bigints');
  return [...new Set(epochs)]
    .filter((e) => e >= 0n && e <= MAX_STORED)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
