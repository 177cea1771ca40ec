/**
 * Reading a request's labels, epochs and counts. Labels travel as text: UTF-8 percent-encoded
 * in a URL path (`/v1/lookup/alice%40example.com`), or raw bytes written `hex:<hex>`, the
 * syntax the `akd` command takes, since labels need not be text. Every mistake is an
 * `HTTP_BAD_REQUEST` naming the parameter; a label over the size limit is `DIRECTORY_LIMIT`,
 * as the directory itself would say.
 */

import { AkdError, carvedCopy, carvedUtf8, fromHex, utf8 } from '@akd-ts/core';
import { HttpError } from './errors.js';

const U64_MAX = (1n << 64n) - 1n;
/** A UTF-16 surrogate without its pair: such text has no UTF-8 encoding. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Quotes a client's text for an error message, cut short. */
export function quote(text: string, max = 40): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}...` : text);
}

/**
 * A label as a client writes it: UTF-8 text, or `hex:<hex>` for raw bytes.
 *
 * @param name the parameter's name, for error messages
 * @param maxBytes the largest label accepted
 * @throws HttpError `HTTP_BAD_REQUEST` for empty text or malformed hex; AkdError
 * `DIRECTORY_LIMIT` for a label over `maxBytes`
 * @example parseLabel('hex:616c696365', 'label', 256) // the bytes of "alice"
 */
export function parseLabel(text: unknown, name: string, maxBytes: number): Uint8Array {
  if (typeof text !== 'string')
    throw new HttpError('HTTP_BAD_REQUEST', `${name}: expected a string`);
  let bytes: Uint8Array;
  if (text.startsWith('hex:')) {
    const hex = text.slice(4);
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) {
      throw new HttpError(
        'HTTP_BAD_REQUEST',
        `${name}: hex: must be followed by an even number of hex digits, got ${quote(text)}`,
      );
    }
    bytes = fromHex(hex, name);
  } else {
    if (LONE_SURROGATE.test(text)) {
      throw new HttpError('HTTP_BAD_REQUEST', `${name}: not well-formed Unicode text`);
    }
    bytes = utf8(text);
  }
  if (bytes.length === 0)
    throw new HttpError('HTTP_BAD_REQUEST', `${name}: a label may not be empty`);
  if (bytes.length > maxBytes) {
    throw new AkdError(
      'DIRECTORY_LIMIT',
      `${name}: a label has at most ${maxBytes} bytes, this one has ${bytes.length}`,
      { field: name },
    );
  }
  return bytes;
}

/**
 * A value as a client writes it in a publish: UTF-8 text (`value`) or hex (`valueHex`).
 *
 * @example parseBytesField({ value: 'key-1' }, 'value', 'updates[0]') // utf8('key-1')
 */
export function parseBytesField(
  record: Record<string, unknown>,
  field: 'label' | 'value',
  where: string,
): Uint8Array {
  const text = record[field];
  const hex = record[`${field}Hex`];
  if (text !== undefined && hex !== undefined) {
    throw new HttpError(
      'HTTP_BAD_REQUEST',
      `${where}: give either "${field}" or "${field}Hex", not both`,
    );
  }
  if (typeof text === 'string') {
    if (LONE_SURROGATE.test(text)) {
      throw new HttpError('HTTP_BAD_REQUEST', `${where}.${field}: not well-formed Unicode text`);
    }
    // carved: a publish body holds many short fields (core slab.ts)
    return carvedUtf8(text);
  }
  if (typeof hex === 'string') {
    if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) {
      throw new HttpError(
        'HTTP_BAD_REQUEST',
        `${where}.${field}Hex: expected hex, got ${quote(hex)}`,
      );
    }
    return carvedCopy(fromHex(hex, `${where}.${field}Hex`));
  }
  throw new HttpError(
    'HTTP_BAD_REQUEST',
    `${where}: "${field}" (text) or "${field}Hex" (hex) must be a string`,
  );
}

/** A query parameter given twice or more (`a=1&a=2`) arrives as an array: refused by name. */
function single(text: unknown, name: string): unknown {
  if (Array.isArray(text)) {
    throw new HttpError(
      'HTTP_BAD_REQUEST',
      `${name}: give the parameter once, not ${text.length} times`,
    );
  }
  return text;
}

/**
 * An epoch in a query string: a decimal unsigned 64-bit integer (spec 2), written without
 * leading zeros, as epochs are written everywhere else (blob names, JSON, headers).
 *
 * @example parseEpoch('7', 'from') // 7n
 */
export function parseEpoch(given: unknown, name: string): bigint {
  const text = single(given, name);
  if (typeof text !== 'string' || !/^(?:0|[1-9][0-9]{0,19})$/.test(text)) {
    throw new HttpError(
      'HTTP_BAD_REQUEST',
      `${name}: expected a non-negative decimal integer without leading zeros, got ${typeof text === 'string' ? quote(text) : 'nothing'}`,
    );
  }
  const value = BigInt(text);
  if (value > U64_MAX)
    throw new HttpError('HTTP_BAD_REQUEST', `${name}: ${text} does not fit in 64 bits`);
  return value;
}

/**
 * A positive count in a query string, such as `mostRecent=3`.
 *
 * @example parseCount('3', 'mostRecent', 1000) // 3
 */
export function parseCount(given: unknown, name: string, max: number): number {
  const text = single(given, name);
  const value = typeof text === 'string' && /^[1-9][0-9]{0,9}$/.test(text) ? Number(text) : NaN;
  if (!(value >= 1)) {
    throw new HttpError(
      'HTTP_BAD_REQUEST',
      `${name}: expected a positive integer, got ${typeof text === 'string' ? quote(text) : 'nothing'}`,
    );
  }
  if (value > max) {
    throw new AkdError('DIRECTORY_LIMIT', `${name}: at most ${max}, got ${value}`, { field: name });
  }
  return value;
}
