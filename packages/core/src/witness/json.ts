/**
 * Plexi's JSON form of a witness signature, as `GET /namespaces/{ns}/audits/{epoch}` serves it
 * and as our auditor writes it:
 *
 * `{"version":1,"ciphersuite":1,"namespace":"…","timestamp":1717084639921,"epoch":1,
 * "digest":"<hex>","signature":"<hex>","key_id":188,"serialized_message":"<hex>"}`
 *
 * Integers are JSON numbers (Plexi's serde u64 and u8), bytes are hex (either case is read,
 * lowercase is written). Reading follows Plexi where it is lenient: `version` or
 * `ciphersuite` may be missing (one of them suffices), `serialized_message` may be null or
 * missing (it is then the encoding of the fields) and unknown fields are ignored. It is
 * stricter where leniency would be ambiguous: the two ciphersuite fields must agree, `key_id`
 * is required (a client picks the key by it), and integers must be exact in JavaScript
 * (at most 2^53 - 1, which covers every millisecond timestamp and epoch in use).
 */

import { fromHex, isWellFormedText, toHex } from '../bytes.js';
import { AkdError } from '../errors.js';
import { encodeSignatureMessage, isPlexiCiphersuite } from './message.js';
import type { WitnessSignature } from './signature.js';

function decodeError(message: string, field?: string): AkdError {
  return new AkdError('WITNESS_DECODE', `witness signature: ${message}`, { field });
}

function integer(o: Record<string, unknown>, name: string, max: number): number | undefined {
  const v = o[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0 || v > max) {
    throw decodeError(`${name} must be an integer from 0 to ${max}`, name);
  }
  return v;
}

function hex(o: Record<string, unknown>, name: string, length?: number): Uint8Array {
  const v = o[name];
  if (typeof v !== 'string' || !/^([0-9a-fA-F]{2})*$/.test(v)) {
    throw decodeError(`${name} must be a hex string`, name);
  }
  const bytes = fromHex(v, name);
  if (length !== undefined && bytes.length !== length) {
    throw decodeError(`${name} must be ${length} bytes`, name);
  }
  return bytes;
}

/**
 * Reads a witness signature from Plexi's JSON (already parsed). The signature is not checked:
 * call {@link verifyWitnessSignature}.
 *
 * @throws AkdError `WITNESS_DECODE` naming the first missing or malformed field (or an
 * unknown ciphersuite).
 * @example verifyWitnessSignature(parseWitnessSignature(await res.json()), witnessKey)
 */
export function parseWitnessSignature(json: unknown): WitnessSignature {
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    throw decodeError('not a JSON object');
  }
  const o = json as Record<string, unknown>;
  const version = integer(o, 'version', 0xffffffff);
  const suite = integer(o, 'ciphersuite', 0xffffffff);
  if (version !== undefined && suite !== undefined && version !== suite) {
    throw decodeError(`version ${version} differs from ciphersuite ${suite}`, 'version');
  }
  const ciphersuite = suite ?? version;
  if (ciphersuite === undefined) throw decodeError('ciphersuite is missing', 'ciphersuite');
  if (!isPlexiCiphersuite(ciphersuite)) {
    throw decodeError(`unknown ciphersuite ${ciphersuite}`, 'ciphersuite');
  }
  const namespace = o['namespace'];
  if (typeof namespace !== 'string' || !isWellFormedText(namespace)) {
    throw decodeError('namespace must be a string of Unicode text', 'namespace');
  }
  const timestamp = integer(o, 'timestamp', Number.MAX_SAFE_INTEGER);
  if (timestamp === undefined) throw decodeError('timestamp is missing', 'timestamp');
  const epoch = integer(o, 'epoch', Number.MAX_SAFE_INTEGER);
  if (epoch === undefined) throw decodeError('epoch is missing', 'epoch');
  const digest = hex(o, 'digest');
  const signature = hex(o, 'signature', 64);
  const keyId = integer(o, 'key_id', 255);
  if (keyId === undefined) throw decodeError('key_id is missing', 'key_id');
  const message = {
    ciphersuite,
    namespace,
    timestamp: BigInt(timestamp),
    epoch: BigInt(epoch),
    digest,
  };
  const serialized = o['serialized_message'];
  const serializedMessage =
    serialized === undefined || serialized === null
      ? encodeSignatureMessage(message)
      : hex(o, 'serialized_message');
  return { version: ciphersuite, ...message, signature, keyId, serializedMessage };
}

/**
 * Plexi's JSON of a witness signature (field order and encodings as Plexi writes them).
 *
 * @throws RangeError for a timestamp or epoch above 2^53 - 1, which JSON numbers would not
 * carry exactly.
 * @example JSON.stringify(witnessSignatureToJson(signWitness(message, seed)))
 */
export function witnessSignatureToJson(s: WitnessSignature): Record<string, unknown> {
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  if (s.timestamp > max || s.epoch > max) {
    throw new RangeError('timestamp and epoch must be at most 2^53 - 1 to be written as JSON');
  }
  return {
    version: s.version,
    ciphersuite: s.ciphersuite,
    namespace: s.namespace,
    timestamp: Number(s.timestamp),
    epoch: Number(s.epoch),
    digest: toHex(s.digest),
    signature: toHex(s.signature),
    key_id: s.keyId,
    serialized_message: toHex(s.serializedMessage),
  };
}
