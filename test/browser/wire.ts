/**
 * What crosses between Node and the page (browser-safe: imports only core). Vector bytes go in
 * as hex; results come back as plain JSON (bigints as decimal strings, bytes as hex) so that
 * Node can compare the browser's answers with its own, value for value.
 */

import { fromHex, toHex } from '@akd-ts/core';
import type { VectorInputs } from '../support/mutations.js';

/** A vector file's inputs with every byte string as hex and the epoch as a decimal string. */
export interface HexVectorInputs {
  configuration: VectorInputs['configuration'];
  publicKey: string;
  epochHash: string;
  epoch: string;
  label: string;
  lookupProof: string;
  historyMostRecent1: string;
  historyComplete: string;
}

/** JSON without bigints or bytes. */
export type Plain = null | boolean | number | string | Plain[] | { [key: string]: Plain };

export function toHexInputs(v: VectorInputs): HexVectorInputs {
  return {
    configuration: v.configuration,
    publicKey: toHex(v.publicKey),
    epochHash: toHex(v.epochHash),
    epoch: v.epoch.toString(),
    label: toHex(v.label),
    lookupProof: toHex(v.lookupProof),
    historyMostRecent1: toHex(v.historyMostRecent1),
    historyComplete: toHex(v.historyComplete),
  };
}

export function fromHexInputs(v: HexVectorInputs): VectorInputs {
  return {
    configuration: v.configuration,
    publicKey: fromHex(v.publicKey),
    epochHash: fromHex(v.epochHash),
    epoch: BigInt(v.epoch),
    label: fromHex(v.label),
    lookupProof: fromHex(v.lookupProof),
    historyMostRecent1: fromHex(v.historyMostRecent1),
    historyComplete: fromHex(v.historyComplete),
  };
}

/** Bigints become decimal strings and byte arrays hex; everything else is copied as JSON. */
export function plain(value: unknown): Plain {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return toHex(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const out: { [key: string]: Plain } = {};
    for (const [k, v] of Object.entries(value)) if (v !== undefined) out[k] = plain(v);
    return out;
  }
  if (value === undefined) return null;
  return value as Plain;
}
