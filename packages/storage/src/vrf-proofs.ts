/**
 * Stored VRF proofs: the writer computes, at publish, every VRF proof that lookups and
 * histories of its epochs serve (spec 10.3, 10.4), so that the processes serving proofs never
 * hold the VRF secret. A record is keyed by (label, freshness, version), the VRF input of
 * spec 6; the proof is the 80 bytes of spec 5.3 (`Gamma || c || s`). The proof of a
 * published version (Fresh, v) also carries that version's 32-byte commitment nonce (spec
 * 3.4, 6), which needs the commitment key, a secret derived from the VRF key.
 */

import { bytesEqual } from '@akd-ts/core';
import type { UserStateAndVrfProofs } from './database.js';
import type { ValueStateFlag, ValueStateRecord } from './records.js';

/** An ECVRF proof: compress(Gamma) 32 || LE16(c) 16 || LE32(s) 32 (spec 5.3). */
export const VRF_PROOF_BYTES = 80;
/** A commitment nonce (spec 6): one hash of the configuration. */
export const NONCE_BYTES = 32;

/** The VRF input a proof is for (spec 6: `label || freshness || be64(version)`, hashed). */
export interface VrfProofKey {
  /** The AkdLabel (user id). */
  label: Uint8Array;
  /** 0 stale, 1 fresh (core's VersionFreshness). */
  freshness: 0 | 1;
  version: bigint;
}

/** One stored VRF proof. */
export interface VrfProofRecord extends VrfProofKey {
  /** The 80-byte proof of spec 5.3. */
  proof: Uint8Array;
  /**
   * The commitment nonce of the version this proof shows present, for (Fresh, v) of a
   * published version; absent for stale proofs and markers not yet published. A store that
   * already holds a nonce for the key keeps it when a record without one is written.
   */
  nonce?: Uint8Array;
}

/** The largest version every driver stores (SQL drivers use signed 64-bit columns). */
const MAX_STORED = (1n << 63n) - 1n;

/** Throws unless `key` is a storable VRF proof key (a caller's mistake). */
export function checkVrfProofKey(key: VrfProofKey): void {
  if (!(key?.label instanceof Uint8Array)) throw new TypeError('key.label must be bytes');
  if (key.freshness !== 0 && key.freshness !== 1) {
    throw new RangeError(`key.freshness must be 0 (stale) or 1 (fresh), not ${key.freshness}`);
  }
  if (typeof key.version !== 'bigint') throw new TypeError('key.version must be a bigint');
  if (key.version < 0n || key.version > MAX_STORED) {
    throw new RangeError(`key.version must be 0 to 2^63 - 1, not ${key.version}`);
  }
}

/**
 * Checks the keys a `getUserStateAndVrfProofs` asked for in view of a state: each valid and
 * of the label `username`, the only label whose proofs that read fetches.
 * @throws RangeError naming the first key of another label
 */
export function checkOwnVrfProofKeys(username: Uint8Array, keys: readonly VrfProofKey[]): void {
  for (const key of keys) {
    checkVrfProofKey(key);
    if (!bytesEqual(key.label, username)) {
      throw new RangeError("keys asked with a user's state must be of that user's label");
    }
  }
}

/**
 * `getUserStateAndVrfProofs` as two reads, the state and then the proofs among `keys(state)`:
 * what a store answers without a read of its own for both (or with tables it cannot read so).
 * @throws RangeError where a key is of another label; what the reads throw
 */
export async function stateThenVrfProofs(
  reads: {
    getUserState(username: Uint8Array, flag: ValueStateFlag): Promise<ValueStateRecord>;
    getVrfProofs(keys: VrfProofKey[]): Promise<VrfProofRecord[]>;
  },
  username: Uint8Array,
  flag: ValueStateFlag,
  keys: (state: ValueStateRecord) => VrfProofKey[],
): Promise<UserStateAndVrfProofs> {
  const state = await reads.getUserState(username, flag);
  const wanted = keys(state);
  checkOwnVrfProofKeys(username, wanted);
  return { state, proofs: await reads.getVrfProofs(wanted) };
}

/** Throws unless `record` is storable: a valid key, an 80-byte proof, a 32-byte nonce if any. */
export function checkVrfProofRecord(record: VrfProofRecord): void {
  checkVrfProofKey(record);
  if (!(record.proof instanceof Uint8Array) || record.proof.length !== VRF_PROOF_BYTES) {
    throw new RangeError(`record.proof must have ${VRF_PROOF_BYTES} bytes`);
  }
  if (
    record.nonce !== undefined &&
    (!(record.nonce instanceof Uint8Array) || record.nonce.length !== NONCE_BYTES)
  ) {
    throw new RangeError(`record.nonce must have ${NONCE_BYTES} bytes when given`);
  }
}

/**
 * A key's bytes, the one column SQL drivers index: `freshness u8 || be64(version) || label`
 * (fixed fields first, so the variable label needs no length).
 */
export function vrfProofKeyBytes(key: VrfProofKey): Uint8Array {
  const out = new Uint8Array(9 + key.label.length);
  out[0] = key.freshness;
  new DataView(out.buffer).setBigUint64(1, key.version);
  out.set(key.label, 9);
  return out;
}

/** The key `vrfProofKeyBytes` wrote. @throws RangeError for fewer than 9 bytes */
export function vrfProofKeyFromBytes(bytes: Uint8Array): VrfProofKey {
  if (bytes.length < 9 || bytes[0]! > 1) throw new RangeError('not a VRF proof key');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    freshness: bytes[0] as 0 | 1,
    version: view.getBigUint64(1),
    label: bytes.slice(9),
  };
}

/**
 * A value's bytes: the proof, then the nonce when there is one (80 or 112 bytes), as the
 * in-process store and replication keep them, and as the SQL drivers stored them before they
 * kept nonces in a table of their own (they still read such rows). Proofs are a function of
 * the key, so only a nonce can differ, and a record without one never erases it.
 */
export function vrfProofValueBytes(record: VrfProofRecord): Uint8Array {
  if (record.nonce === undefined) return record.proof.slice();
  const out = new Uint8Array(VRF_PROOF_BYTES + NONCE_BYTES);
  out.set(record.proof);
  out.set(record.nonce, VRF_PROOF_BYTES);
  return out;
}

/** The record of `key` with the stored `value` bytes. @throws RangeError for other lengths */
export function vrfProofRecordOf(key: VrfProofKey, value: Uint8Array): VrfProofRecord {
  if (value.length !== VRF_PROOF_BYTES && value.length !== VRF_PROOF_BYTES + NONCE_BYTES) {
    throw new RangeError(`a stored VRF proof has 80 or 112 bytes, not ${value.length}`);
  }
  const record: VrfProofRecord = { ...key, proof: value.slice(0, VRF_PROOF_BYTES) };
  if (value.length > VRF_PROOF_BYTES) record.nonce = value.slice(VRF_PROOF_BYTES);
  return record;
}

/**
 * A map key for in-process use, never stored: freshness, the version in decimal, a colon,
 * then one character per label byte. A lookup makes several per proof, so it is built
 * without hex (half the characters, no string per byte); the colon ends the digits, so two
 * keys are equal only for equal fields.
 */
export function vrfProofMapKey(key: VrfProofKey): string {
  return `${key.freshness}${key.version}:${labelChars(key.label)}`;
}

/** A label as one character per byte, for in-process maps (never stored). */
export function labelChars(label: Uint8Array): string {
  // apply takes the typed array as it is, where a spread would copy it into an array first
  if (label.length <= 4096) return String.fromCharCode.apply(null, label as unknown as number[]);
  let s = '';
  for (let i = 0; i < label.length; i += 4096) {
    s += String.fromCharCode.apply(null, label.subarray(i, i + 4096) as unknown as number[]);
  }
  return s;
}
