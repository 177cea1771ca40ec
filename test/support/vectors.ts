/**
 * Loads upstream's test vectors (test/vectors/upstream, spec 17.1) for tests in every package.
 */

import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export type VectorConfig = 'whatsapp_v1' | 'experimental';

export interface UpstreamVectors {
  configuration: VectorConfig;
  domainLabel: string;
  publicKey: Uint8Array;
  epochHash: Uint8Array;
  epoch: bigint;
  label: Uint8Array;
  lookupProof: Uint8Array;
  historyMostRecent1: Uint8Array;
  historyComplete: Uint8Array;
}

export const VECTOR_DIR = fileURLToPath(new URL('../vectors/upstream/', import.meta.url));

/** The HardCodedAkdVRF secret key every upstream vector and fixture uses (spec 5.6). */
export const HARD_CODED_VRF_SECRET = Buffer.from(
  'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721',
  'hex',
);

function hex(value: unknown): Uint8Array {
  if (typeof value !== 'string') throw new TypeError('expected a hex string in the vector file');
  return new Uint8Array(Buffer.from(value, 'hex'));
}

/** Parses `<config>.yaml` (documents in the order of spec 17.1). */
export function loadVectors(configuration: VectorConfig): UpstreamVectors {
  const text = readFileSync(`${VECTOR_DIR}${configuration}.yaml`, 'utf8');
  const docs = parseAllDocuments(text).map((d) => d.toJS() as unknown);
  const meta = docs[0] as { configuration: string; domain_label: string };
  if (meta.configuration !== configuration)
    throw new Error('vector file names another configuration');
  return {
    configuration,
    domainLabel: meta.domain_label,
    publicKey: hex(docs[1]),
    epochHash: hex(docs[2]),
    epoch: BigInt(docs[3] as number),
    label: hex(docs[4]),
    lookupProof: hex(docs[5]),
    historyMostRecent1: hex(docs[6]),
    historyComplete: hex(docs[7]),
  };
}
