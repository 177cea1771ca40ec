/**
 * Where the directory's VRF secret key lives (spec 5.8 `VRFKeyStorage`). The key is the root
 * of the directory's privacy: it positions every label in the tree and, hashed, becomes the
 * commitment key. Implementations may fetch it from a file, a KMS or an HSM wrapper; the
 * in-memory store is for tests and ephemeral directories.
 */

import { AkdError, VRF_KEY_LENGTH } from '@akd-ts/core';

export interface VrfKeyStore {
  /**
   * The 32-byte secret key (an Ed25519 seed), in an array of the caller's own: a directory
   * wipes it once it has derived what it needs, so return a copy, never the store's array or
   * a view of it.
   */
  retrieve(): Promise<Uint8Array>;
}

/**
 * A key held in memory.
 *
 * @example
 * ```ts
 * const keys = InMemoryVrfKeyStore.generate();
 * ```
 */
export class InMemoryVrfKeyStore implements VrfKeyStore {
  readonly #secret: Uint8Array;

  constructor(secret: Uint8Array) {
    if (secret.length !== VRF_KEY_LENGTH) {
      throw new AkdError('VRF_INVALID_SECRET_KEY', `a VRF secret key has ${VRF_KEY_LENGTH} bytes`);
    }
    // a copy: `slice` of a Node Buffer (crypto.randomBytes, fs.readFileSync) is a view, and
    // the directory wipes what `retrieve` gives it, which would wipe the caller's key and this
    // store's with it (the next open then derived a key of zeros)
    this.#secret = new Uint8Array(secret);
  }

  /** A fresh random key (Web Crypto's CSPRNG). */
  static generate(): InMemoryVrfKeyStore {
    return new InMemoryVrfKeyStore(crypto.getRandomValues(new Uint8Array(VRF_KEY_LENGTH)));
  }

  async retrieve(): Promise<Uint8Array> {
    return new Uint8Array(this.#secret);
  }

  /** Never shows the key. */
  toString(): string {
    return 'InMemoryVrfKeyStore(<secret>)';
  }
}
