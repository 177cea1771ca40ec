/**
 * Witness signatures in Plexi's format: a {@link SignatureMessage} with the witness's Ed25519
 * signature of its encoding, the key id (the last byte of the witness's public key, which lets
 * a client pick among a witness's keys) and the signed bytes themselves.
 *
 * Verification is strict, as Plexi's (ed25519-dalek's `verify_strict`): RFC 8032 encodings
 * only (not ZIP-215: no non-canonical point or scalar), and neither the public key nor the
 * signature's R may have a small-order component. With both points free of torsion, the
 * cofactored equation that @noble/curves checks and the cofactorless one of dalek agree, so a
 * signature is valid here exactly when it is for an RFC 8032 verifier that rejects such
 * points; every signature an honest signer produces passes.
 */

import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesEqual, toHex } from '../bytes.js';
import { AkdError } from '../errors.js';
import { encodeSignatureMessage, isPlexiCiphersuite, type SignatureMessage } from './message.js';

/** A witness's signature of a {@link SignatureMessage}, as Plexi serves it. */
export interface WitnessSignature extends SignatureMessage {
  /** Plexi's older name for the ciphersuite; always equal to `ciphersuite`. */
  version: number;
  /** Ed25519 signature of `serializedMessage` (64 bytes). */
  signature: Uint8Array;
  /** The last byte of the witness's public key. */
  keyId: number;
  /** The signed bytes: `encodeSignatureMessage` of the fields above. */
  serializedMessage: Uint8Array;
}

/**
 * Plexi's key id of an Ed25519 public key: its last byte.
 *
 * @example witnessKeyId(publicKey) // 0..255
 */
export function witnessKeyId(publicKey: Uint8Array): number {
  checkPublicKey(publicKey);
  return publicKey[31]!;
}

/**
 * The Ed25519 public key of a witness's 32-byte secret key (seed).
 *
 * @throws RangeError for a secret key that is not 32 bytes.
 * @example witnessPublicKey(seed).length // 32
 */
export function witnessPublicKey(secretKey: Uint8Array): Uint8Array {
  checkSecretKey(secretKey);
  return ed25519.getPublicKey(secretKey);
}

function checkSecretKey(secretKey: Uint8Array): void {
  if (!(secretKey instanceof Uint8Array) || secretKey.length !== 32) {
    throw new RangeError('secretKey must be 32 bytes');
  }
}

function checkPublicKey(publicKey: Uint8Array): void {
  if (!(publicKey instanceof Uint8Array) || publicKey.length !== 32) {
    throw new RangeError('publicKey must be 32 bytes');
  }
}

/**
 * Signs `m` with a witness's 32-byte Ed25519 secret key (seed).
 *
 * @throws RangeError for a secret key that is not 32 bytes, and as {@link encodeSignatureMessage}.
 * @example const s = signWitness({ ciphersuite: 1, namespace, timestamp: BigInt(Date.now()), epoch, digest: root }, seed);
 */
export function signWitness(m: SignatureMessage, secretKey: Uint8Array): WitnessSignature {
  checkSecretKey(secretKey);
  const serializedMessage = encodeSignatureMessage(m);
  const publicKey = ed25519.getPublicKey(secretKey);
  return {
    version: m.ciphersuite,
    ciphersuite: m.ciphersuite,
    namespace: m.namespace,
    timestamp: m.timestamp,
    epoch: m.epoch,
    digest: m.digest.slice(),
    signature: ed25519.sign(serializedMessage, secretKey),
    keyId: publicKey[31]!,
    serializedMessage,
  };
}

/** A point's encoding decodes strictly and the point has no small-order component. */
function torsionFree(encoding: Uint8Array): boolean {
  try {
    const p = ed25519.Point.fromBytes(encoding, false);
    return !p.isSmallOrder() && p.isTorsionFree();
  } catch {
    return false;
  }
}

function fail(
  code:
    | 'WITNESS_SIGNATURE_INVALID'
    | 'WITNESS_MESSAGE_MISMATCH'
    | 'WITNESS_KEY_MISMATCH'
    | 'WITNESS_DECODE',
  message: string,
  field: string,
): never {
  throw new AkdError(code, message, { field });
}

/**
 * Checks a witness signature against the witness key the caller trusts. It does not look at
 * the namespace, epoch, digest or timestamp: compare those with what you expect.
 *
 * @throws RangeError for a public key that is not 32 bytes (the caller's own configuration);
 * AkdError `WITNESS_DECODE` for an unknown ciphersuite or a version that differs from it,
 * `WITNESS_KEY_MISMATCH` when the key id is not the key's, `WITNESS_MESSAGE_MISMATCH` when
 * `serializedMessage` is not the encoding of the fields, `WITNESS_SIGNATURE_INVALID` when the
 * signature does not verify strictly.
 * @example verifyWitnessSignature(parseWitnessSignature(json), witnessKey); // then trust json.digest at json.epoch
 */
export function verifyWitnessSignature(s: WitnessSignature, publicKey: Uint8Array): void {
  checkPublicKey(publicKey);
  if (!isPlexiCiphersuite(s.ciphersuite)) {
    fail('WITNESS_DECODE', `unknown witness ciphersuite ${String(s.ciphersuite)}`, 'ciphersuite');
  }
  if (s.version !== s.ciphersuite) {
    fail(
      'WITNESS_DECODE',
      `version ${s.version} differs from ciphersuite ${s.ciphersuite}`,
      'version',
    );
  }
  if (s.keyId !== publicKey[31]) {
    fail(
      'WITNESS_KEY_MISMATCH',
      `the signature names key id ${s.keyId}, not ${publicKey[31]!} of witness key ${toHex(publicKey)}`,
      'key_id',
    );
  }
  const message = encodeSignatureMessage(s);
  if (!bytesEqual(message, s.serializedMessage)) {
    fail(
      'WITNESS_MESSAGE_MISMATCH',
      'serialized_message is not the encoding of the signed fields',
      'serialized_message',
    );
  }
  let valid = false;
  if (
    s.signature.length === 64 &&
    torsionFree(publicKey) &&
    torsionFree(s.signature.subarray(0, 32))
  ) {
    try {
      valid = ed25519.verify(s.signature, message, publicKey, { zip215: false });
      /* c8 ignore next 3 */
    } catch {
      valid = false; // noble answers false for bad encodings; a throw would mean the same
    }
  }
  if (!valid) {
    fail(
      'WITNESS_SIGNATURE_INVALID',
      `the witness signature of ${s.namespace} epoch ${s.epoch} does not verify`,
      'signature',
    );
  }
}
