/**
 * The JSON shapes of the API. Rules, the same in every response:
 * - epochs and versions are decimal strings: they are unsigned 64-bit (spec 2), and a JSON
 *   number above 2^53 silently loses precision in JavaScript and many other parsers;
 * - hashes and keys are lowercase hex;
 * - labels and values are `{ "text": <UTF-8 text or null>, "hex": <hex> }`, since they are
 *   arbitrary bytes that are usually text;
 * - every proof is also included whole, as the base64 of the bare upstream protobuf message
 *   (`proof`), so a JSON client verifies exactly what a protobuf client would, with core's
 *   decode* and *Verify functions. What the proof claims (value, version) is repeated beside
 *   it under `claimed` for convenience; nothing there is verified.
 */

import {
  fromUtf8,
  isUtf8,
  toHex,
  type EpochHash,
  type HistoryProof,
  type LookupProof,
} from '@akd-ts/core';

/** Bytes that are usually text. */
export interface JsonBytes {
  text: string | null;
  hex: string;
}

/**
 * @example jsonBytes(utf8('alice')) // { text: 'alice', hex: '616c696365' }
 */
export function jsonBytes(bytes: Uint8Array): JsonBytes {
  return { text: isUtf8(bytes) ? fromUtf8(bytes) : null, hex: toHex(bytes) };
}

/** Standard base64 (RFC 4648 section 4, padded) of a proof's bytes. */
export function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** What one version in a proof claims, unverified. */
export interface ClaimedVersion {
  version: string;
  /** The epoch in which this version was published. */
  epoch: string;
  value: JsonBytes;
}

function claimed(p: { version: bigint; epoch: bigint; value: Uint8Array }): ClaimedVersion {
  return { version: p.version.toString(), epoch: p.epoch.toString(), value: jsonBytes(p.value) };
}

/** The epoch a proof was served against. */
function served(epochHash: EpochHash): { epoch: string; rootHash: string } {
  return { epoch: epochHash.epoch.toString(), rootHash: toHex(epochHash.hash) };
}

/** `GET /v1/lookup/:label` */
export interface LookupJson {
  label: JsonBytes;
  epoch: string;
  rootHash: string;
  claimed: ClaimedVersion;
  proof: string;
}

/** @example lookupJson(label, proof, bytes, epochHash).claimed.version // '3' */
export function lookupJson(
  label: Uint8Array,
  proof: LookupProof,
  encoded: Uint8Array,
  epochHash: EpochHash,
): LookupJson {
  return {
    label: jsonBytes(label),
    ...served(epochHash),
    claimed: claimed(proof),
    proof: base64(encoded),
  };
}

/** `POST /v1/lookup` */
export interface BatchLookupJson {
  epoch: string;
  rootHash: string;
  results: { label: JsonBytes; claimed: ClaimedVersion; proof: string }[];
}

/** @example batchLookupJson(labels, proofs, encoded, epochHash).results.length */
export function batchLookupJson(
  labels: Uint8Array[],
  proofs: LookupProof[],
  encoded: Uint8Array[],
  epochHash: EpochHash,
): BatchLookupJson {
  return {
    ...served(epochHash),
    results: labels.map((label, i) => ({
      label: jsonBytes(label),
      claimed: claimed(proofs[i]!),
      proof: base64(encoded[i]!),
    })),
  };
}

/** `GET /v1/history/:label` */
export interface HistoryJson {
  label: JsonBytes;
  epoch: string;
  rootHash: string;
  /** The `mostRecent` asked for, or null for the complete history. */
  mostRecent: number | null;
  /** Newest first, as in the proof. */
  claimed: ClaimedVersion[];
  proof: string;
}

/** @example historyJson(label, null, proof, bytes, epochHash).claimed[0].version */
export function historyJson(
  label: Uint8Array,
  mostRecent: number | null,
  proof: HistoryProof,
  encoded: Uint8Array,
  epochHash: EpochHash,
): HistoryJson {
  return {
    label: jsonBytes(label),
    ...served(epochHash),
    mostRecent,
    claimed: proof.updateProofs.map(claimed),
    proof: base64(encoded),
  };
}

/** `GET /v1/audit` (streamed by audit-stream.ts, `proof` before `inserted`) */
export interface AuditJson {
  from: string;
  to: string;
  /** The start epoch of each step: `proofs[i]` covers `epochs[i] -> epochs[i] + 1`. */
  epochs: string[];
  /** Leaves inserted over the range. */
  inserted: number;
  proof: string;
}
