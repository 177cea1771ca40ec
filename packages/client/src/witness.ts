/**
 * Witness signatures (Plexi's format: a witness signs `SignatureMessage { ciphersuite,
 * namespace, timestamp, epoch, digest }` where the digest is the epoch's root hash) checked
 * against a client's policy: trusted keys, a quorum, a namespace and a maximum age. Parsing
 * and signature checks are the codec's (core's witness module); this file decides what the
 * valid signatures say about the heads a client knows: a quorum that covers one, or a
 * signature on another root for an epoch the client verified (a fork).
 */

import { AkdError, bytesEqual, toHex } from '@akd-ts/core';
import type { Head } from './state.js';

/** What a client needs of a parsed witness signature. */
export interface WitnessSignatureLike {
  namespace: string;
  /** ms since 1970 */
  timestamp: bigint;
  epoch: bigint;
  digest: Uint8Array;
  keyId: number;
}

/** Parses and checks witness signatures (core's Plexi module). */
export interface WitnessCodec<S extends WitnessSignatureLike = WitnessSignatureLike> {
  parse(json: unknown): S;
  /** @throws AkdError when `signature` is not valid under `publicKey`. */
  verify(signature: S, publicKey: Uint8Array): void;
}

/** Which witnesses a client trusts, and how many must agree. */
export interface WitnessPolicy {
  /** Ed25519 public keys of the trusted witnesses (32 bytes each). */
  keys: Uint8Array[];
  /** Distinct trusted witnesses that must sign one head (1 <= quorum <= keys.length). */
  quorum: number;
  /** The namespace the witnesses sign this directory's heads under. */
  namespace: string;
}

/** A valid signature of a trusted witness. */
export interface ValidWitness {
  key: Uint8Array;
  signature: WitnessSignatureLike;
  /** The signature as the server relayed it (Plexi JSON), for evidence. */
  json: unknown;
}

/** What the relayed signatures say. */
export interface WitnessReading {
  /** The newest known head a quorum signed, with its signatures. */
  covered?: { head: Head; witnesses: ValidWitness[]; witnessedAt: number };
  /** A valid signature on another root for an epoch whose root the client knows. */
  conflict?: { known: Head; witness: ValidWitness };
  /** Why each ignored signature was ignored (for messages). */
  ignored: string[];
}

/** Checks `policy`'s shape. @throws TypeError / RangeError naming the field. */
export function checkPolicy(policy: WitnessPolicy): void {
  if (
    !Array.isArray(policy.keys) ||
    policy.keys.some((k) => !(k instanceof Uint8Array) || k.length !== 32)
  ) {
    throw new TypeError('witnesses.keys: expected 32-byte Ed25519 public keys');
  }
  if (!Number.isInteger(policy.quorum) || policy.quorum < 1 || policy.quorum > policy.keys.length) {
    throw new RangeError(
      `witnesses.quorum: expected 1 to ${policy.keys.length}, got ${policy.quorum}`,
    );
  }
  if (typeof policy.namespace !== 'string' || policy.namespace === '') {
    throw new TypeError('witnesses.namespace: expected a non-empty string');
  }
}

/** The trusted key that makes `s` valid, if any (Plexi's key id is the key's last byte). */
function signer<S extends WitnessSignatureLike>(
  codec: WitnessCodec<S>,
  policy: WitnessPolicy,
  s: S,
): Uint8Array | undefined {
  for (const key of policy.keys) {
    if (key[31] !== s.keyId) continue;
    try {
      codec.verify(s, key);
      return key;
    } catch {
      // another trusted key may share the id byte
    }
  }
  return undefined;
}

/**
 * Reads relayed signatures against the roots a client knows (`known`: epoch -> root).
 * Signatures that fail to parse, are of another namespace, of no trusted key, or do not
 * verify are ignored (a server can relay anything); valid ones either agree with a known
 * root, disagree with it (a conflict: the witnesses saw another tree), or are of an epoch
 * the client does not know (ignored).
 */
export function readWitnesses<S extends WitnessSignatureLike>(
  codec: WitnessCodec<S>,
  policy: WitnessPolicy,
  relayed: unknown[],
  known: Map<bigint, Uint8Array>,
): WitnessReading {
  const ignored: string[] = [];
  const agreeing = new Map<bigint, Map<string, ValidWitness>>();
  let conflict: WitnessReading['conflict'];
  relayed.forEach((json, i) => {
    let s: S;
    try {
      s = codec.parse(json);
    } catch (e) {
      ignored.push(`witness ${i}: unreadable (${(e as Error).message})`);
      return;
    }
    if (s.namespace !== policy.namespace) {
      ignored.push(`witness ${i}: namespace '${s.namespace}', not '${policy.namespace}'`);
      return;
    }
    const key = signer(codec, policy, s);
    if (key === undefined) {
      ignored.push(`witness ${i}: not a valid signature of a trusted key`);
      return;
    }
    const root = known.get(s.epoch);
    if (root === undefined) {
      ignored.push(`witness ${i}: epoch ${s.epoch} is not one the client verified`);
      return;
    }
    const valid = { key, signature: s, json };
    if (!bytesEqual(root, s.digest)) {
      conflict ??= { known: { epoch: s.epoch, rootHash: root }, witness: valid };
      return;
    }
    const byKey = agreeing.get(s.epoch) ?? new Map<string, ValidWitness>();
    const id = toHex(key);
    const had = byKey.get(id);
    if (had === undefined || had.signature.timestamp < s.timestamp) byKey.set(id, valid);
    agreeing.set(s.epoch, byKey);
  });
  let covered: WitnessReading['covered'];
  for (const [epoch, byKey] of agreeing) {
    if (byKey.size < policy.quorum || (covered && covered.head.epoch > epoch)) continue;
    const witnesses = [...byKey.values()].sort((a, b) =>
      a.signature.timestamp > b.signature.timestamp ? -1 : 1,
    );
    // the quorum-th newest: `quorum` witnesses vouched for the head at least this recently
    const witnessedAt = Number(witnesses[policy.quorum - 1]!.signature.timestamp);
    covered = { head: { epoch, rootHash: known.get(epoch)! }, witnesses, witnessedAt };
  }
  return conflict === undefined ? { covered, ignored } : { covered, conflict, ignored };
}

/** @throws AkdError `CLIENT_WITNESS_QUORUM` naming why signatures were not counted. */
export function quorumError(policy: WitnessPolicy, reading: WitnessReading, head: Head): AkdError {
  const why = reading.ignored.length === 0 ? 'none relayed' : reading.ignored.join('; ');
  return new AkdError(
    'CLIENT_WITNESS_QUORUM',
    `fewer than ${policy.quorum} trusted witnesses signed a verified head up to epoch ${head.epoch} (${why})`,
  );
}
