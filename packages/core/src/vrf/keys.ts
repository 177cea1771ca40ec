/**
 * ECVRF keys (spec 5.2): the 32-byte secret seed and its RFC 8032 expansion, and the 32-byte
 * public key with upstream's parsing rules (`VRFPublicKey::try_from`). Both classes keep their
 * decoded form so that proving or verifying many inputs under one key does not redo the work.
 */

import { sha512 } from '@noble/hashes/sha2.js';
import { toHex } from '../bytes.js';
import { AkdError } from '../errors.js';
import {
  Point,
  bytesToScalarLE,
  decodePointLenient,
  modL,
  scalarToBytesLE,
  type EdwardsPoint,
} from './curve.js';
import { vrfWasm } from './wasm/loader.js';
import { wasmKeyCheck, wasmMulBase, wasmScalarMulAdd, wasmScalarReduce } from './wasm/ops.js';

/** Length of a VRF secret key and of a public key (spec 5.2). */
export const VRF_KEY_LENGTH = 32;

function assertBytes(value: unknown, name: string): asserts value is Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${name} must be a Uint8Array`);
}

/** The two halves of `SHA512(sk)` after clamping (spec 5.2). Secret: never log them. */
export interface ExpandedSecretKeyBytes {
  /** `h[0..32]` clamped: the little-endian secret scalar `x` (not reduced mod L). */
  scalarBytes: Uint8Array;
  /** `h[32..64]`: the key of the nonce hash (RFC 9381 5.4.2.2). */
  nonceKey: Uint8Array;
}

/**
 * The key expansion of spec 5.2 (RFC 8032 5.1.5): `h = SHA512(sk)`, `x_bytes = h[0..32]` with
 * `x_bytes[0] &= 248`, `x_bytes[31] &= 63`, `x_bytes[31] |= 64`, and `nonce_key = h[32..64]`.
 *
 * @throws AkdError `VRF_INVALID_SECRET_KEY` when `sk` is not 32 bytes
 * @example
 * const { scalarBytes } = expandSecretKeyBytes(fromHex('9d61b19d...7f60'));
 * toHex(scalarBytes); // '307c8386...' (RFC 9381 example 16, `x`)
 */
export function expandSecretKeyBytes(sk: Uint8Array): ExpandedSecretKeyBytes {
  assertBytes(sk, 'secretKey');
  if (sk.length !== VRF_KEY_LENGTH) {
    // spec 5.2: upstream's SigningKey("Wrong length, expected 32 byte private key"); the
    // message names only the length, never the bytes.
    throw new AkdError(
      'VRF_INVALID_SECRET_KEY',
      `VRF secret key must be ${VRF_KEY_LENGTH} bytes, got ${sk.length}`,
      { field: 'secretKey' },
    );
  }
  const h = sha512(sk);
  const scalarBytes = h.slice(0, 32);
  scalarBytes[0]! &= 248;
  scalarBytes[31]! &= 63;
  scalarBytes[31]! |= 64;
  return { scalarBytes, nonceKey: h.slice(32, 64) };
}

// Lets VrfSecretKey wrap the key it computed itself, without giving VrfPublicKey a public
// constructor that would skip the checks of `fromBytes`.
let createPublicKey: (bytes: Uint8Array, point: EdwardsPoint | undefined) => VrfPublicKey;

/**
 * A parsed VRF public key `Y` (spec 5.2): the bytes exactly as received, since upstream hashes
 * those bytes (not a re-encoding) into encode_to_curve and the challenge, and the decoded point.
 */
export class VrfPublicKey {
  readonly #bytes: Uint8Array;
  #point: EdwardsPoint | undefined;

  static {
    createPublicKey = (bytes, point) => new VrfPublicKey(bytes, point);
  }

  private constructor(bytes: Uint8Array, point: EdwardsPoint | undefined) {
    this.#bytes = bytes;
    this.#point = point;
  }

  /**
   * The decoded point `Y` as a noble point (not small order; it may still carry a torsion
   * component). A key checked on the WebAssembly arithmetic is decoded by noble only when this
   * is first read.
   */
  get point(): EdwardsPoint {
    // fromBytes has checked that the bytes decode
    return (this.#point ??= decodePointLenient(this.#bytes)!);
  }

  /**
   * Parses a public key like upstream's `VRFPublicKey::try_from` (spec 5.2): 32 bytes,
   * dalek-lenient decompression (non-canonical `y` and `x = 0` with the sign bit are
   * accepted), then small-order points are refused.
   *
   * @throws AkdError `VRF_INVALID_PUBLIC_KEY` on a wrong length, an undecodable encoding or a
   *   small-order point
   * @example
   * const pk = VrfPublicKey.fromBytes(fromHex('f6ec49c8...702d')); // HardCodedAkdVRF key
   */
  static fromBytes(bytes: Uint8Array): VrfPublicKey {
    assertBytes(bytes, 'publicKey');
    if (bytes.length !== VRF_KEY_LENGTH) {
      throw new AkdError(
        'VRF_INVALID_PUBLIC_KEY',
        `VRF public key must be ${VRF_KEY_LENGTH} bytes, got ${bytes.length}`,
        { field: 'publicKey' },
      );
    }
    const wasm = vrfWasm();
    let point: EdwardsPoint | undefined;
    let check: 'ok' | 'not-a-point' | 'small-order';
    if (wasm !== undefined) {
      check = wasmKeyCheck(wasm, bytes);
    } else {
      point = decodePointLenient(bytes);
      check = point === undefined ? 'not-a-point' : point.isSmallOrder() ? 'small-order' : 'ok';
    }
    if (check === 'not-a-point') {
      throw new AkdError('VRF_INVALID_PUBLIC_KEY', 'VRF public key is not a curve point', {
        field: 'publicKey',
      });
    }
    if (check === 'small-order') {
      throw new AkdError('VRF_INVALID_PUBLIC_KEY', 'VRF public key is a small-order point', {
        field: 'publicKey',
      });
    }
    return new VrfPublicKey(bytes.slice(), point);
  }

  /** The 32 bytes the key was parsed from (a copy). */
  toBytes(): Uint8Array {
    return this.#bytes.slice();
  }

  /** True when both keys were parsed from the same bytes. */
  equals(other: VrfPublicKey): boolean {
    return toHex(this.#bytes) === toHex(other.#bytes);
  }

  /** Lowercase hex of the key bytes. */
  toString(): string {
    return toHex(this.#bytes);
  }

  /** `JSON.stringify` gives the hex of the key bytes. */
  toJSON(): string {
    return this.toString();
  }
}

/** The secret half of a `VrfSecretKey`, kept outside the object (see `secretParts`). */
interface SecretParts {
  /**
   * `x mod L`, 32 bytes little-endian. Spec 5.2: reducing changes nothing, every point it
   * multiplies has order L.
   */
  x: Uint8Array;
  /** `8x mod L`: `8·Gamma = (8x mod L)·H`, what evaluation multiplies by. */
  x8: Uint8Array;
  nonceKey: Uint8Array;
}

const SECRETS = new WeakMap<VrfSecretKey, SecretParts>();
const EIGHT = new Uint8Array([8]);
const NOTHING = new Uint8Array(0);

/**
 * An expanded VRF secret key (spec 5.2): the secret scalar `x`, the nonce key and the public
 * key, computed once. The secret parts are not properties of the object (they sit in a
 * module-private map), so neither `JSON.stringify`, `console.log` nor `Object.keys` shows them.
 */
export class VrfSecretKey {
  /** `Y = x·B`, the RFC 8032 public key of the same seed. */
  readonly publicKey: VrfPublicKey;

  private constructor(publicKey: VrfPublicKey) {
    this.publicKey = publicKey;
  }

  /**
   * Expands a 32-byte secret seed (spec 5.2): on WebAssembly with its constant-time scalar
   * reduction and base-point multiplication (wasm.c, checked by scripts/ct-check.mjs), else
   * with BigInt `%` and noble's multiply, which are not constant time (see ecvrf.ts).
   *
   * @throws AkdError `VRF_INVALID_SECRET_KEY` when `sk` is not 32 bytes
   * @example
   * const key = VrfSecretKey.fromBytes(fromHex('c9afa9d8...6721'));
   * key.publicKey.toString(); // 'f6ec49c8...702d'
   */
  static fromBytes(sk: Uint8Array): VrfSecretKey {
    const { scalarBytes, nonceKey } = expandSecretKeyBytes(sk);
    const wasm = vrfWasm();
    let parts: SecretParts;
    let publicKey: VrfPublicKey;
    if (wasm !== undefined) {
      const x = wasmScalarReduce(wasm, scalarBytes);
      parts = { x, x8: wasmScalarMulAdd(wasm, EIGHT, x, NOTHING), nonceKey };
      publicKey = createPublicKey(wasmMulBase(wasm, x), undefined);
    } else {
      // x is in [2^254, 2^255) and a multiple of 8 while L is odd and 8L > 2^255, so x mod L is
      // never 0 and noble's multiply (1 <= k < L) always accepts it.
      const scalar = modL(bytesToScalarLE(scalarBytes));
      const point = Point.BASE.multiply(scalar);
      parts = {
        x: scalarToBytesLE(scalar, 32),
        x8: scalarToBytesLE(modL(8n * scalar), 32),
        nonceKey,
      };
      publicKey = createPublicKey(point.toBytes(), point);
    }
    scalarBytes.fill(0);
    const key = new VrfSecretKey(publicKey);
    SECRETS.set(key, parts);
    return key;
  }

  /** The 32-byte public key. */
  get publicKeyBytes(): Uint8Array {
    return this.publicKey.toBytes();
  }

  /** Names the public key only. */
  toString(): string {
    return `VrfSecretKey(public ${this.publicKey.toString()})`;
  }

  /** `JSON.stringify` shows the public key only. */
  toJSON(): { publicKey: string } {
    return { publicKey: this.publicKey.toString() };
  }
}

/**
 * The secret scalars and nonce key of `key`, for the prover (ecvrf.ts). Not exported from the
 * package: only this directory reads secrets.
 */
export function secretParts(key: VrfSecretKey): SecretParts {
  return SECRETS.get(key)!;
}

/**
 * The 32-byte VRF public key of a secret seed: the RFC 8032 Ed25519 public key (spec 5.2).
 *
 * @throws AkdError `VRF_INVALID_SECRET_KEY` when `sk` is not 32 bytes
 * @example
 * toHex(vrfPublicKeyFromSecret(fromHex('c9afa9d8...6721'))); // 'f6ec49c8...702d'
 */
export function vrfPublicKeyFromSecret(sk: Uint8Array): Uint8Array {
  return VrfSecretKey.fromBytes(sk).publicKeyBytes;
}

/** The secret scalar in the forms native multiplications take (32 bytes little-endian each). */
export interface ReducedSecretScalars {
  /** `x mod L`: Gamma = x·H. */
  x: Uint8Array;
  /** `8x mod L`: the point `8·Gamma` that `proof_to_hash` hashes is `(8x mod L)·H`. */
  x8: Uint8Array;
}

/**
 * `x mod L` and `8x mod L` for the secret seed `sk` (spec 5.2, 5.3), for backends whose
 * multiplications want reduced scalars. Since `H` has order L, reducing changes no product.
 * Reduced as `fromBytes` reduces: in the WebAssembly module, in constant time, where it loads
 * (the native addon reduces in its own C). Secret: never log them.
 *
 * @throws AkdError `VRF_INVALID_SECRET_KEY` when `sk` is not 32 bytes
 */
export function reducedSecretScalars(sk: Uint8Array): ReducedSecretScalars {
  const { x, x8 } = secretParts(VrfSecretKey.fromBytes(sk));
  return { x: x.slice(), x8: x8.slice() };
}

/** Accepts a parsed key or raw bytes (parsed with `VrfSecretKey.fromBytes`). */
export function toSecretKey(key: VrfSecretKey | Uint8Array): VrfSecretKey {
  return key instanceof VrfSecretKey ? key : VrfSecretKey.fromBytes(key);
}
