/**
 * Witnesses for tests: Plexi signatures made with core's signWitness, as a server relays
 * them (Plexi's JSON).
 */

import { signWitness, witnessSignatureToJson, type PlexiCiphersuite } from '@akd-ts/core';
import { ed25519 } from '@noble/curves/ed25519.js';

export interface TestWitness {
  publicKey: Uint8Array;
  sign(
    namespace: string,
    epoch: bigint,
    digest: Uint8Array,
    timestamp: number,
    ciphersuite?: PlexiCiphersuite,
  ): Record<string, unknown>;
}

export function testWitness(seed: number): TestWitness {
  const secret = new Uint8Array(32).fill(seed);
  return {
    publicKey: ed25519.getPublicKey(secret),
    sign: (namespace, epoch, digest, timestamp, ciphersuite = 0x0001) =>
      witnessSignatureToJson(
        signWitness(
          { ciphersuite, namespace, timestamp: BigInt(timestamp), epoch, digest },
          secret,
        ),
      ),
  };
}
