/**
 * Signed heads: an auditor's statement "I verified this log's history, append-only, up to
 * this epoch with this root", signed with Ed25519 (RFC 8032, via @noble/curves) so that a
 * client can check a root it was served against an auditor it trusts. Upstream akd has no
 * such thing; the layout below is ours, versioned by its domain-separation prefix.
 *
 * Signed message (all integers big-endian, the notation of spec 2):
 *
 * | bytes | field |
 * | --- | --- |
 * | 24 | the ASCII string `akd-ts auditor head v1` followed by two zero bytes (domain separation) |
 * | 4 + n | `be32(n)` then the namespace, n bytes of UTF-8 (which log: its listing URL or a name) |
 * | 8 | `be64(epoch)`: the last verified epoch |
 * | 8 | `be64(timestamp)`: when it was verified, milliseconds since 1970-01-01T00:00:00Z |
 * | 32 | the root hash at that epoch |
 *
 * The signature is the 64-byte Ed25519 signature of that message (no prehash, no context),
 * checked strictly (RFC 8032 encodings only, not ZIP-215), so one head has one valid
 * signature encoding per key.
 */

import { ed25519 } from '@noble/curves/ed25519.js';
import { assertU64, be32, be64, bytesEqual, concatBytes, fromHex, toHex, utf8 } from '../bytes.js';
import { AkdError } from '../errors.js';
import type { Digest } from '../types.js';

/** What an auditor vouches for. */
export interface AuditorHead {
  /** Which log (the listing URL, or a name agreed with clients). */
  namespace: string;
  /** The last epoch verified. */
  epoch: bigint;
  /** When, in milliseconds since the Unix epoch. */
  timestamp: bigint;
  /** The root hash at `epoch` (32 bytes). */
  rootHash: Digest;
}

/** A head with the auditor's signature and public key. */
export interface SignedAuditorHead extends AuditorHead {
  /** The auditor's Ed25519 public key (32 bytes). */
  publicKey: Uint8Array;
  /** Ed25519 signature of {@link auditorHeadMessage} (64 bytes). */
  signature: Uint8Array;
}

/** The signed head as JSON: bytes as lowercase hex, integers as decimal strings (exact for u64). */
export interface SignedAuditorHeadJson {
  namespace: string;
  epoch: string;
  timestamp: string;
  rootHash: string;
  publicKey: string;
  signature: string;
}

const DOMAIN = concatBytes(utf8('akd-ts auditor head v1'), new Uint8Array(2));
const MAX_NAMESPACE = 1024;

function checkHead(head: AuditorHead): Uint8Array {
  assertU64(head.epoch, 'epoch');
  assertU64(head.timestamp, 'timestamp');
  if (head.rootHash.length !== 32) throw new RangeError('rootHash must be 32 bytes');
  const namespace = utf8(head.namespace);
  if (namespace.length > MAX_NAMESPACE) {
    throw new RangeError(`namespace must be at most ${MAX_NAMESPACE} bytes of UTF-8`);
  }
  return namespace;
}

/**
 * The bytes an auditor signs for `head` (layout in this module's header).
 *
 * @throws RangeError for an epoch or timestamp out of u64 range, a root that is not 32
 * bytes, or a namespace over 1024 bytes.
 * @example auditorHeadMessage({ namespace: 'log', epoch: 1n, timestamp: 0n, rootHash }).length // 24 + 4 + 3 + 8 + 8 + 32
 */
export function auditorHeadMessage(head: AuditorHead): Uint8Array {
  const namespace = checkHead(head);
  return concatBytes(
    DOMAIN,
    be32(namespace.length),
    namespace,
    be64(head.epoch),
    be64(head.timestamp),
    head.rootHash,
  );
}

/**
 * The Ed25519 public key of an auditor's 32-byte secret key (seed).
 *
 * @example auditorPublicKey(secretKey).length // 32
 */
export function auditorPublicKey(secretKey: Uint8Array): Uint8Array {
  if (!(secretKey instanceof Uint8Array) || secretKey.length !== 32) {
    throw new RangeError('secretKey must be 32 bytes');
  }
  return ed25519.getPublicKey(secretKey);
}

/**
 * Signs `head` with the auditor's 32-byte Ed25519 secret key (seed).
 *
 * @example const signed = signAuditorHead(secretKey, { namespace, epoch, timestamp: BigInt(Date.now()), rootHash });
 */
export function signAuditorHead(secretKey: Uint8Array, head: AuditorHead): SignedAuditorHead {
  const publicKey = auditorPublicKey(secretKey);
  const signature = ed25519.sign(auditorHeadMessage(head), secretKey);
  return { ...head, rootHash: head.rootHash.slice(), publicKey, signature };
}

/**
 * Checks an auditor's signed head against the auditor key the client trusts.
 *
 * @throws AkdError `AUDIT_SIGNATURE` when the head carries another key, or the signature does
 * not verify (a malformed key or signature included).
 * @example verifyAuditorHead(trustedAuditorKey, signed); // then trust signed.rootHash at signed.epoch
 */
export function verifyAuditorHead(publicKey: Uint8Array, signed: SignedAuditorHead): void {
  if (!bytesEqual(publicKey, signed.publicKey)) {
    throw new AkdError(
      'AUDIT_SIGNATURE',
      `the head is signed by auditor key ${toHex(signed.publicKey)}, not ${toHex(publicKey)}`,
      { field: 'publicKey' },
    );
  }
  const message = auditorHeadMessage(signed); // a head out of range is a caller's RangeError
  let valid = false;
  if (signed.signature.length === 64 && publicKey.length === 32) {
    try {
      valid = ed25519.verify(signed.signature, message, publicKey, { zip215: false });
      /* c8 ignore next 3 */
    } catch {
      valid = false; // noble answers false for bad encodings; a throw would mean the same
    }
  }
  if (!valid) {
    throw new AkdError(
      'AUDIT_SIGNATURE',
      `the auditor's signature of epoch ${signed.epoch} does not verify`,
      { field: 'signature' },
    );
  }
}

/**
 * The JSON form of a signed head (as the auditor writes it to its heads file).
 *
 * @example JSON.stringify(signedHeadToJson(signed))
 */
export function signedHeadToJson(signed: SignedAuditorHead): SignedAuditorHeadJson {
  return {
    namespace: signed.namespace,
    epoch: signed.epoch.toString(),
    timestamp: signed.timestamp.toString(),
    rootHash: toHex(signed.rootHash),
    publicKey: toHex(signed.publicKey),
    signature: toHex(signed.signature),
  };
}

function field(json: Record<string, unknown>, name: string, pattern: RegExp): string {
  const value = json[name];
  if (typeof value !== 'string' || !pattern.test(value)) {
    throw new AkdError('DECODE_INVALID_VALUE', `signed head: ${name} is missing or malformed`, {
      field: name,
    });
  }
  return value;
}

/**
 * Reads the JSON form of a signed head (the signature is not checked: call
 * {@link verifyAuditorHead}).
 *
 * @throws AkdError `DECODE_INVALID_VALUE` naming a missing or malformed field.
 * @example verifyAuditorHead(key, signedHeadFromJson(JSON.parse(line)))
 */
export function signedHeadFromJson(json: unknown): SignedAuditorHead {
  if (json === null || typeof json !== 'object') {
    throw new AkdError('DECODE_INVALID_VALUE', 'signed head: not a JSON object');
  }
  const o = json as Record<string, unknown>;
  const namespace = o['namespace'];
  if (typeof namespace !== 'string') {
    throw new AkdError('DECODE_INVALID_VALUE', 'signed head: namespace is missing', {
      field: 'namespace',
    });
  }
  const u64 = /^(0|[1-9][0-9]{0,19})$/;
  const head: SignedAuditorHead = {
    namespace,
    epoch: BigInt(field(o, 'epoch', u64)),
    timestamp: BigInt(field(o, 'timestamp', u64)),
    rootHash: fromHex(field(o, 'rootHash', /^[0-9a-fA-F]{64}$/)),
    publicKey: fromHex(field(o, 'publicKey', /^[0-9a-fA-F]{64}$/)),
    signature: fromHex(field(o, 'signature', /^[0-9a-fA-F]{128}$/)),
  };
  const max = (1n << 64n) - 1n;
  if (head.epoch > max || head.timestamp > max) {
    throw new AkdError('DECODE_INVALID_VALUE', 'signed head: an integer exceeds 64 bits');
  }
  return head;
}
