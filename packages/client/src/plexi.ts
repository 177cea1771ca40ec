/**
 * The client's default witness codec: core's Plexi module (Plexi's JSON, both ciphersuites,
 * strict Ed25519), so that the signatures of Plexi and of `akd audit` witnesses are read alike.
 */

import { parseWitnessSignature, verifyWitnessSignature, type WitnessSignature } from '@akd-ts/core';
import type { WitnessCodec } from './witness.js';

export const plexiCodec: WitnessCodec<WitnessSignature> = {
  parse: parseWitnessSignature,
  verify: verifyWitnessSignature,
};
