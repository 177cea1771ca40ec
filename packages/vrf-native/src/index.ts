/**
 * ECVRF-EDWARDS25519-SHA512-TAI (spec 5.3) with the curve arithmetic in a small C addon: the
 * publish hot path (evaluation, a whole batch of alphas per call: the try-and-increment loop,
 * its SHA-512 hashes and the multiplication, eight labels at a time with AVX-512F where the
 * processor has it, native/x8.c) and proving (one call a proof, native/prove.h). The secret
 * scalar is reduced mod L in the addon too, in constant time, never by JavaScript's BigInt.
 * The bytes are those of core's portable implementation, the reference (tested on random
 * inputs and on crafted candidates).
 */

import { createRequire } from 'node:module';

/**
 * A secret key expanded as spec 5.2 says (core's `expandSecretKeyBytes`: SHA-512, the clamped
 * scalar's bytes and the nonce key) with its public key (`vrfPublicKeyFromSecret`): what a
 * {@link NativeVrfKey} is made from. This package imports nothing of core: the directory loads
 * it with `require`, since it is optional, and a core imported from here would then be a
 * second copy of core, in CommonJS, beside the ES module one wherever the require resolves to
 * sources.
 */
export interface ExpandedVrfSecret {
  /** The clamped scalar, 32 bytes little-endian; zeroed once read. */
  scalarBytes: Uint8Array;
  /** The nonce key, 32 bytes; zeroed once read. */
  nonceKey: Uint8Array;
  /** The public key, 32 bytes. */
  publicKey: Uint8Array;
}

/** The addon's functions (native/addon.c). */
export interface NativeVrfAddon {
  /**
   * The 64-byte VRF outputs of `out.length / 64` alphas of equal length, concatenated in
   * `alphas`, into `out[64i..]`, for the public key and `scalar = 8x mod L` (spec 5.3: the
   * whole try-and-increment loop and both hashes). Returns how many were evaluated: all, or
   * the index of the first alpha no counter maps to a point.
   */
  evaluate(publicKey: Uint8Array, scalar: Uint8Array, alphas: Uint8Array, out: Uint8Array): number;
  /**
   * Whether `evaluate` multiplies eight points at a time with AVX-512F (native/x8.c), as it
   * does by default where the processor can: `false` forces one at a time (same bytes; for
   * tests and comparisons). Returns whether eight lanes are now in use.
   */
  eightLanes(enabled: boolean): boolean;
  /**
   * For each 32-byte candidate i: `scalar·(8·decode(candidate))` encoded into `out[32i..]`
   * and 1 in `accepted[i]`, or 0 when the candidate is not a point or has small order.
   */
  multiplyCandidates(
    candidates: Uint8Array,
    scalar: Uint8Array,
    out: Uint8Array,
    accepted: Uint8Array,
  ): void;
  /**
   * `x = s mod L` and `x8 = 8s mod L` (32 bytes each) for the clamped secret scalar `s`
   * (spec 5.2), constant time.
   */
  reduceSecret(clamped: Uint8Array, x: Uint8Array, x8: Uint8Array): void;
  /**
   * The 80-byte proof (spec 5.3) of `alpha` into `out`, for `secret = x mod L || nonce key`
   * (64 bytes); constant time in both. Throws when no counter maps alpha to a point.
   */
  prove(secret: Uint8Array, publicKey: Uint8Array, alpha: Uint8Array, out: Uint8Array): void;
  /**
   * The 80-byte proofs of n alphas of one length, concatenated in `alphas`, into `out`
   * (80 n bytes), eight at a time where the processor has AVX-512F; secret as for `prove`.
   * Returns n, or the index of the first alpha no counter maps to a point.
   */
  proveMany(secret: Uint8Array, publicKey: Uint8Array, alphas: Uint8Array, out: Uint8Array): number;
  /**
   * The eight-lane steps on eight given candidates, one per lane (for tests): as
   * `multiplyCandidates` for exactly eight. Returns false, writing nothing, where the
   * processor or the build has no eight-lane code.
   */
  eightLaneCandidates(
    candidates: Uint8Array,
    scalar: Uint8Array,
    out: Uint8Array,
    accepted: Uint8Array,
  ): boolean;
  /**
   * As `evaluate`, for `secret` as `prove` takes it, also writing to `kept[160i..]` what a
   * proof of alpha i needs (H's extended coordinates and Gamma's encoding, native/prove.h
   * VRF_KEPT_BYTES), for about the same work. Returns as `evaluate` does.
   */
  evaluateKeeping(
    secret: Uint8Array,
    publicKey: Uint8Array,
    alphas: Uint8Array,
    out: Uint8Array,
    kept: Uint8Array,
  ): number;
  /**
   * The 80-byte proofs (into `out`) of the alphas whose evaluations kept `kept` (160 bytes
   * each, from `evaluateKeeping` under the same secret): the bytes `proveMany` gives, without
   * the hash to curve and the multiplication Gamma = x H, about half a proof's work. The kept
   * bytes are trusted, not checked.
   */
  proveKept(secret: Uint8Array, publicKey: Uint8Array, kept: Uint8Array, out: Uint8Array): void;
}

/** Bytes an evaluation keeps per alpha for its proof (`NativeVrfAddon.evaluateKeeping`). */
export const VRF_KEPT_BYTES = 160;

let loaded: NativeVrfAddon | null | undefined;
let loadError: string | undefined;

const ADDON_FUNCTIONS = [
  'evaluate',
  'eightLanes',
  'multiplyCandidates',
  'reduceSecret',
  'prove',
  'proveMany',
  'eightLaneCandidates',
  'evaluateKeeping',
  'proveKept',
] as const;

/**
 * Why a loaded binary cannot serve as this version's addon (one built from older sources
 * lacks functions this code calls), or undefined when it can. Such a binary is then treated
 * as absent, so the directory falls back instead of failing in the middle of a publish.
 */
export function addonMismatch(binary: unknown): string | undefined {
  const missing = ADDON_FUNCTIONS.filter(
    (name) => typeof (binary as Record<string, unknown> | null)?.[name] !== 'function',
  );
  if (missing.length === 0) return undefined;
  return `the built addon lacks ${missing.join(', ')}: it was built from other sources (rebuild it with npm rebuild @akd-ts/vrf-native)`;
}

/** The addon, or null when it was not built or cannot load on this platform. */
export function loadNativeVrf(): NativeVrfAddon | null {
  if (loaded === undefined) {
    try {
      const binary: unknown = createRequire(import.meta.url)('../build/Release/akd_vrf.node');
      loadError = addonMismatch(binary);
      loaded = loadError === undefined ? (binary as NativeVrfAddon) : null;
    } catch (error) {
      loaded = null;
      loadError = error instanceof Error ? error.message : String(error);
    }
  }
  return loaded;
}

/** Why the addon did not load (for logs and tests), or undefined. */
export function nativeVrfLoadError(): string | undefined {
  loadNativeVrf();
  return loadError;
}

/**
 * The alphas one after another, as the addon's batch calls take them, or undefined where their
 * lengths differ (they then go one call each).
 */
function joinAlphas(alphas: readonly Uint8Array[]): Uint8Array | undefined {
  const length = alphas.length === 0 ? 0 : alphas[0]!.length;
  if (!alphas.every((a) => a.length === length)) return undefined;
  const joined = new Uint8Array(alphas.length * length);
  for (let i = 0; i < alphas.length; i++) joined.set(alphas[i]!, i * length);
  return joined;
}

/** A secret key ready for native evaluation and proving. Secret: never log it. */
export class NativeVrfKey {
  /** The public key `Y = x·B` (spec 5.2). */
  readonly publicKey: Uint8Array;
  /** `x mod L || nonce key`, what `prove` takes. */
  readonly #secret = new Uint8Array(64);
  readonly #x8 = new Uint8Array(32);
  readonly #addon: NativeVrfAddon;

  /** @throws RangeError when a part of `key` is not 32 bytes */
  constructor(addon: NativeVrfAddon, key: ExpandedVrfSecret) {
    const { scalarBytes, nonceKey, publicKey } = key;
    for (const [name, part] of Object.entries({ scalarBytes, nonceKey, publicKey })) {
      if (!(part instanceof Uint8Array) || part.length !== 32) {
        throw new RangeError(`key.${name} must be 32 bytes`);
      }
    }
    this.#addon = addon;
    // spec 5.3 proof_to_hash hashes 8·Gamma = (8x mod L)·H; both reductions in constant time
    addon.reduceSecret(scalarBytes, this.#secret.subarray(0, 32), this.#x8);
    scalarBytes.fill(0);
    this.#secret.set(nonceKey, 32);
    nonceKey.fill(0);
    this.publicKey = publicKey.slice();
  }

  /** The 80-byte proof of `alpha` (spec 5.3 `prove`). */
  prove(alpha: Uint8Array): Uint8Array {
    const out = new Uint8Array(80);
    this.#addon.prove(this.#secret, this.publicKey, alpha, out);
    return out;
  }

  /**
   * The 80-byte proofs of many alphas, in order (views of one buffer): alphas of one length go
   * to the addon in one call, eight lanes at a time where the processor can; others one each.
   * @throws Error when no counter maps an alpha to a point
   */
  proveMany(alphas: readonly Uint8Array[]): Uint8Array[] {
    const n = alphas.length;
    const joined = joinAlphas(alphas);
    if (joined === undefined) return alphas.map((a) => this.prove(a));
    const out = new Uint8Array(80 * n);
    if (this.#addon.proveMany(this.#secret, this.publicKey, joined, out) !== n) {
      throw new Error('encode_to_curve found no point in 256 tries');
    }
    return Array.from({ length: n }, (_, i) => out.subarray(80 * i, 80 * i + 80));
  }

  /** The 64-byte VRF output of one alpha. */
  evaluate(alpha: Uint8Array): Uint8Array {
    return this.evaluateMany([alpha])[0]!;
  }

  /**
   * The 64-byte VRF outputs of many alphas, in order (views of one buffer): alphas of one
   * length go to the addon in one call, which runs each one's whole evaluation; others go
   * one call each.
   */
  evaluateMany(alphas: readonly Uint8Array[]): Uint8Array[] {
    const n = alphas.length;
    const joined = joinAlphas(alphas);
    if (joined === undefined) return alphas.flatMap((alpha) => this.evaluateMany([alpha]));
    const out = new Uint8Array(64 * n);
    if (this.#addon.evaluate(this.publicKey, this.#x8, joined, out) !== n) {
      throw new Error('encode_to_curve found no point in 256 tries');
    }
    return Array.from({ length: n }, (_, i) => out.subarray(64 * i, 64 * i + 64));
  }

  /**
   * As `evaluateMany`, with what each alpha's proof needs (`kept`, VRF_KEPT_BYTES each, views
   * of one buffer), for `proveKept`. Alphas of mixed lengths go one call each.
   * @throws Error when no counter maps an alpha to a point
   */
  evaluateKeeping(alphas: readonly Uint8Array[]): { outputs: Uint8Array[]; kept: Uint8Array[] } {
    const n = alphas.length;
    const joined = joinAlphas(alphas);
    if (joined === undefined) {
      const each = alphas.map((alpha) => this.evaluateKeeping([alpha]));
      return { outputs: each.map((e) => e.outputs[0]!), kept: each.map((e) => e.kept[0]!) };
    }
    const out = new Uint8Array(64 * n);
    const kept = new Uint8Array(VRF_KEPT_BYTES * n);
    if (this.#addon.evaluateKeeping(this.#secret, this.publicKey, joined, out, kept) !== n) {
      throw new Error('encode_to_curve found no point in 256 tries');
    }
    return {
      outputs: Array.from({ length: n }, (_, i) => out.subarray(64 * i, 64 * i + 64)),
      kept: Array.from({ length: n }, (_, i) =>
        kept.subarray(VRF_KEPT_BYTES * i, VRF_KEPT_BYTES * (i + 1)),
      ),
    };
  }

  /**
   * The proofs of the alphas whose evaluations kept `kept` (`evaluateKeeping` of this key), in
   * order (views of one buffer): the bytes `proveMany` gives for about half its work.
   * @throws RangeError when an entry is not VRF_KEPT_BYTES long
   */
  proveKept(kept: readonly Uint8Array[]): Uint8Array[] {
    const n = kept.length;
    const joined = new Uint8Array(VRF_KEPT_BYTES * n);
    kept.forEach((entry, i) => {
      if (entry.length !== VRF_KEPT_BYTES) {
        throw new RangeError(`kept entry ${i} is ${entry.length} bytes, not ${VRF_KEPT_BYTES}`);
      }
      joined.set(entry, VRF_KEPT_BYTES * i);
    });
    const out = new Uint8Array(80 * n);
    this.#addon.proveKept(this.#secret, this.publicKey, joined, out);
    return Array.from({ length: n }, (_, i) => out.subarray(80 * i, 80 * i + 80));
  }
}
