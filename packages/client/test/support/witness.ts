/**
 * A stand-in witness for tests of the client's quorum logic: Ed25519 over a plain text
 * message, with the fields and JSON names the client reads. It is injected as the client's
 * codec exactly as core's Plexi module is.
 */

import { ed25519 } from '@noble/curves/ed25519.js';
import { AkdError, fromHex, toHex, utf8 } from '@akd-ts/core';
import type { WitnessCodec, WitnessSignatureLike } from '@akd-ts/client';

interface TestSignature extends WitnessSignatureLike {
  signature: Uint8Array;
}

function message(s: WitnessSignatureLike): Uint8Array {
  return utf8(`${s.namespace}|${s.epoch}|${toHex(s.digest)}|${s.timestamp}`);
}

export const testCodec: WitnessCodec<TestSignature> = {
  parse(json) {
    const o = json as Record<string, string>;
    if (typeof o?.namespace !== 'string') throw new AkdError('DECODE_MALFORMED', 'not a signature');
    return {
      namespace: o.namespace,
      timestamp: BigInt(o.timestamp!),
      epoch: BigInt(o.epoch!),
      digest: fromHex(o.digest!),
      keyId: Number(o.key_id),
      signature: fromHex(o.signature!),
    };
  },
  verify(s, publicKey) {
    if (!ed25519.verify(s.signature, message(s), publicKey)) {
      throw new AkdError('AUDIT_SIGNATURE', 'bad signature');
    }
  },
};

export interface TestWitness {
  publicKey: Uint8Array;
  sign(
    namespace: string,
    epoch: bigint,
    digest: Uint8Array,
    timestamp: number,
  ): Record<string, string>;
}

export function testWitness(seed: number): TestWitness {
  const secret = new Uint8Array(32).fill(seed);
  const publicKey = ed25519.getPublicKey(secret);
  return {
    publicKey,
    sign(namespace, epoch, digest, timestamp) {
      const s = { namespace, epoch, digest, timestamp: BigInt(timestamp), keyId: publicKey[31]! };
      return {
        namespace,
        epoch: epoch.toString(),
        digest: toHex(digest),
        timestamp: String(timestamp),
        key_id: String(publicKey[31]),
        signature: toHex(ed25519.sign(message(s), secret)),
      };
    },
  };
}
