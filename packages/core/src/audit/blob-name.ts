/**
 * Audit blob names (spec 16): `<epoch>/<hex(previous_hash)>/<hex(current_hash)>`, the key a
 * published audit blob is stored and listed under. Formatting follows upstream's
 * `AuditBlobName` exactly (decimal epoch, lowercase hex); parsing is stricter than upstream's
 * (which splits on `/` and ignores parts after the third): a name here has exactly three
 * parts and a canonical decimal epoch, so one epoch has one spelling and a listing cannot
 * hide a second blob for an epoch behind a variant of its name. Hex is read in either case.
 */

import { assertU64, fromHex, toHex } from '../bytes.js';
import { AkdError } from '../errors.js';
import type { Digest } from '../types.js';

/** The parts of an audit blob's name (upstream `AuditBlobName`). */
export interface AuditBlobName {
  /** The epoch in the name: the step's start or end epoch, depending on the naming. */
  epoch: bigint;
  /** Root hash before the step (32 bytes). */
  previousHash: Digest;
  /** Root hash after the step (32 bytes). */
  currentHash: Digest;
}

const U64_MAX = (1n << 64n) - 1n;
const EPOCH_RE = /^(0|[1-9][0-9]{0,19})$/;
const HASH_RE = /^[0-9a-fA-F]{64}$/;

function badName(name: string, reason: string): AkdError {
  // a listing key is untrusted: quote it, cut short, so an error stays one readable line
  const shown = JSON.stringify(name.length > 160 ? `${name.slice(0, 160)}...` : name);
  return new AkdError('AUDIT_BLOB_NAME', `${shown} is not an audit blob name: ${reason}`, {
    field: 'name',
  });
}

/**
 * The name string of a blob (spec 16): decimal epoch, then both hashes in lowercase hex.
 *
 * @throws RangeError when the epoch is not a u64 or a hash is not 32 bytes.
 * @example
 * formatAuditBlobName({ epoch: 54n, previousHash: new Uint8Array(32).fill(1), currentHash: new Uint8Array(32) })
 * // '54/0101...01/0000...00'
 */
export function formatAuditBlobName(name: AuditBlobName): string {
  assertU64(name.epoch, 'epoch');
  if (name.previousHash.length !== 32) throw new RangeError('previousHash must be 32 bytes');
  if (name.currentHash.length !== 32) throw new RangeError('currentHash must be 32 bytes');
  return `${name.epoch}/${toHex(name.previousHash)}/${toHex(name.currentHash)}`;
}

/**
 * Parses a blob name (spec 16): exactly three `/`-separated parts, a canonical decimal u64
 * (no sign, no leading zero), and two 32-byte hashes in hex of either case.
 *
 * @throws AkdError `AUDIT_BLOB_NAME` naming what is wrong.
 * @example parseAuditBlobName('54/' + '01'.repeat(32) + '/' + '00'.repeat(32)).epoch // 54n
 */
export function parseAuditBlobName(name: string): AuditBlobName {
  if (typeof name !== 'string') throw new TypeError('name must be a string');
  const parts = name.split('/');
  if (parts.length !== 3) {
    throw badName(
      name,
      `expected <epoch>/<previous hash>/<current hash>, got ${parts.length} part(s)`,
    );
  }
  const [epochText, previous, current] = parts as [string, string, string];
  if (!EPOCH_RE.test(epochText)) {
    throw badName(name, 'the epoch is not a decimal integer without leading zeros');
  }
  const epoch = BigInt(epochText);
  if (epoch > U64_MAX) throw badName(name, 'the epoch does not fit in 64 bits');
  if (!HASH_RE.test(previous)) throw badName(name, 'the previous hash is not 64 hex digits');
  if (!HASH_RE.test(current)) throw badName(name, 'the current hash is not 64 hex digits');
  return { epoch, previousHash: fromHex(previous), currentHash: fromHex(current) };
}
