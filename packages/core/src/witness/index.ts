/**
 * Witnesses in Cloudflare Plexi's format: the signed message, its two encodings, signatures
 * and their JSON. See message.ts for the byte layouts.
 */

export { encodeSignatureMessage, isPlexiCiphersuite, PLEXI_CIPHERSUITES } from './message.js';
export type { PlexiCiphersuite, SignatureMessage } from './message.js';
export {
  signWitness,
  verifyWitnessSignature,
  witnessKeyId,
  witnessPublicKey,
} from './signature.js';
export type { WitnessSignature } from './signature.js';
export { parseWitnessSignature, witnessSignatureToJson } from './json.js';
