/**
 * Plexi's `SignatureMessage`: what a witness (an auditor in Cloudflare Plexi's format) signs
 * for one epoch of one log, and its two byte encodings. For an akd log the `digest` is the
 * root hash of the tree at `epoch` (the end hash of that epoch's audit blob, spec 16), so a
 * client that trusts the witness key can trust that root at that epoch.
 *
 * Ciphersuite 0x0001 (Ed25519, protobuf): the message as a proto2 message whose fields are all
 * `required`, so every field is written, even when it is zero or empty, in field order:
 *
 * | field | wire type | content |
 * | --- | --- | --- |
 * | 1 | varint | ciphersuite (u32) |
 * | 2 | length-delimited | namespace, UTF-8 |
 * | 3 | varint | timestamp, milliseconds since 1970-01-01T00:00:00Z (u64) |
 * | 4 | length-delimited | `Epoch { 1: varint u64 }` |
 * | 5 | length-delimited | digest |
 *
 * Ciphersuite 0x0002 (Ed25519, bincode "legacy"): fixed-width little-endian integers, strings
 * and byte strings prefixed by their length as a u64:
 *
 * | bytes | content |
 * | --- | --- |
 * | 4 | `le32(ciphersuite)` |
 * | 8 + n | `le64(n)` then the namespace, n bytes of UTF-8 |
 * | 8 | `le64(timestamp)` |
 * | 8 | `le64(epoch)` |
 * | 8 + m | `le64(m)` then the digest, m bytes |
 *
 * Both layouts are checked against the vectors Plexi publishes (test/vectors/plexi).
 */

import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { assertU64, concatBytes, isWellFormedText, utf8 } from '../bytes.js';

/** Plexi's ciphersuites: 0x0001 Ed25519 over protobuf, 0x0002 Ed25519 over legacy bincode. */
export type PlexiCiphersuite = 0x0001 | 0x0002;

/** The ciphersuites this module encodes, in Plexi's numbering. */
export const PLEXI_CIPHERSUITES: readonly PlexiCiphersuite[] = [0x0001, 0x0002];

/** What a witness signs: one log's (`namespace`) root (`digest`) at `epoch`, seen at `timestamp`. */
export interface SignatureMessage {
  ciphersuite: PlexiCiphersuite;
  /** Which log, a name agreed between the witness and the log's clients. */
  namespace: string;
  /** When the witness verified the epoch, milliseconds since the Unix epoch. */
  timestamp: bigint;
  epoch: bigint;
  /** For an akd log, the root hash at `epoch` (32 bytes). */
  digest: Uint8Array;
}

/** Whether `value` names a ciphersuite of {@link PLEXI_CIPHERSUITES}. */
export function isPlexiCiphersuite(value: unknown): value is PlexiCiphersuite {
  return value === 0x0001 || value === 0x0002;
}

function le64(v: bigint): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, v, true);
  return out;
}

function le32(v: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, v, true);
  return out;
}

function checkMessage(m: SignatureMessage): void {
  if (m === null || typeof m !== 'object') throw new TypeError('message must be an object');
  if (!isPlexiCiphersuite(m.ciphersuite)) {
    throw new RangeError('ciphersuite must be 0x0001 (protobuf) or 0x0002 (bincode)');
  }
  if (typeof m.namespace !== 'string') throw new TypeError('namespace must be a string');
  if (!isWellFormedText(m.namespace)) {
    throw new RangeError('namespace must have no lone surrogate (it is signed as UTF-8)');
  }
  assertU64(m.timestamp, 'timestamp');
  assertU64(m.epoch, 'epoch');
  if (!(m.digest instanceof Uint8Array)) throw new TypeError('digest must be a Uint8Array');
}

/**
 * The bytes a witness signs for `m`, in the encoding its ciphersuite names (layouts in this
 * module's header).
 *
 * @throws TypeError / RangeError for a field of the wrong type, an unknown ciphersuite, a
 * namespace with a lone surrogate or an integer out of u64 range.
 * @example encodeSignatureMessage({ ciphersuite: 1, namespace: 'log', timestamp: 0n, epoch: 1n, digest })
 */
export function encodeSignatureMessage(m: SignatureMessage): Uint8Array {
  checkMessage(m);
  const namespace = utf8(m.namespace);
  if (m.ciphersuite === 0x0002) {
    return concatBytes(
      le32(m.ciphersuite),
      le64(BigInt(namespace.length)),
      namespace,
      le64(m.timestamp),
      le64(m.epoch),
      le64(BigInt(m.digest.length)),
      m.digest,
    );
  }
  const w = new BinaryWriter();
  w.tag(1, WireType.Varint).uint32(m.ciphersuite);
  w.tag(2, WireType.LengthDelimited).bytes(namespace);
  w.tag(3, WireType.Varint).uint64(m.timestamp);
  w.tag(4, WireType.LengthDelimited).fork().tag(1, WireType.Varint).uint64(m.epoch).join();
  w.tag(5, WireType.LengthDelimited).bytes(m.digest);
  return w.finish();
}
