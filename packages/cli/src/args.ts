/**
 * Parsing of command-line values into the bytes and numbers the library takes. Each helper
 * names the option in its error, so a mistake reads as `usage error: --root: ...` and exits 2
 * instead of surfacing later as a confusing verification failure.
 */

import { readFile } from 'node:fs/promises';
import {
  AkdError,
  VrfPublicKey,
  configurationByName,
  fromHex,
  utf8,
  type Configuration,
} from '@akd-ts/core';
import { UsageError } from './errors.js';
import type { CliIo } from './io.js';

const U64_MAX = (1n << 64n) - 1n;

/** Quotes a user's value for an error message, cut short so a pasted proof stays one line. */
export function quote(text: string, max = 40): string {
  return JSON.stringify(text.length > max ? `${text.slice(0, max)}...` : text);
}

/**
 * Decodes hex in either case; whitespace is ignored so pasted, wrapped hex works.
 *
 * @param option the option's name, for the error message
 * @param length the exact byte length required, if any
 * @throws UsageError when `text` is not hex or has the wrong length
 * @example parseHex('ABcd', '--root') // Uint8Array [0xab, 0xcd]
 */
export function parseHex(text: string, option: string, length?: number): Uint8Array {
  const hex = text.replace(/\s+/g, '');
  if (!/^[0-9a-fA-F]*$/.test(hex)) {
    const hint = /^0x/i.test(hex) ? ' (without a 0x prefix)' : '';
    throw new UsageError(`${option}: expected hex${hint}, got ${quote(text)}`);
  }
  if (hex.length % 2 !== 0) {
    throw new UsageError(`${option}: odd number of hex digits (${hex.length})`);
  }
  const bytes = fromHex(hex, option);
  if (length !== undefined && bytes.length !== length) {
    throw new UsageError(
      `${option}: expected ${length} bytes (${2 * length} hex digits), got ${bytes.length}`,
    );
  }
  return bytes;
}

/**
 * A label as typed: UTF-8 text, or raw bytes written `hex:<hex>` (labels need not be text).
 *
 * @example parseLabel('hex:3136') // the same bytes as parseLabel('16')
 */
export function parseLabel(text: string, option = '--label'): Uint8Array {
  if (text.startsWith('hex:')) return parseHex(text.slice(4), option);
  return utf8(text);
}

/**
 * An epoch (an unsigned 64-bit integer, spec 2) in decimal.
 *
 * @example parseEpoch('49', '--epoch') // 49n
 */
export function parseEpoch(text: string, option: string): bigint {
  if (!/^[0-9]+$/.test(text.trim())) {
    throw new UsageError(`${option}: expected a non-negative integer, got ${quote(text)}`);
  }
  const value = BigInt(text.trim());
  if (value > U64_MAX) throw new UsageError(`${option}: ${text} does not fit in 64 bits`);
  return value;
}

/**
 * A positive count such as `--most-recent 3`.
 *
 * @example parseCount('3', '--most-recent') // 3
 */
export function parseCount(text: string, option: string): number {
  const value = /^[0-9]+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new UsageError(`${option}: expected a positive integer, got ${quote(text)}`);
  }
  return value;
}

/**
 * Comma-separated 32-byte hashes (root hashes, oldest first).
 *
 * @example parseHashes('b8d3...7bb4,565a...25ec', '--hashes').length // 2
 */
export function parseHashes(text: string, option: string): Uint8Array[] {
  const items = text.split(',').map((s) => s.trim());
  if (items.some((s) => s === '')) {
    throw new UsageError(`${option}: empty item in the comma-separated list ${quote(text)}`);
  }
  return items.map((item, i) => parseHex(item, `${option} item ${i + 1}`, 32));
}

/**
 * The VRF public key, parsed now so a bad key is a usage error rather than a failed proof.
 *
 * @example parsePublicKey('f6ec49c8...702d', '--public-key')
 */
export function parsePublicKey(text: string, option: string): VrfPublicKey {
  const bytes = parseHex(text, option, 32);
  try {
    return VrfPublicKey.fromBytes(bytes);
  } catch (e) {
    if (e instanceof AkdError) throw new UsageError(`${option}: ${e.message}`, { cause: e });
    throw e;
  }
}

/**
 * The configuration named by `--config`; `--domain-label` belongs to `experimental` only, so
 * giving it with `whatsapp_v1` is refused rather than silently ignored.
 *
 * @example parseConfiguration('experimental', 'ExampleLabel')
 */
export function parseConfiguration(name: string, domainLabel: string | undefined): Configuration {
  if (domainLabel !== undefined && name !== 'experimental') {
    throw new UsageError('--domain-label applies to the experimental configuration only');
  }
  try {
    return configurationByName(name, domainLabel);
  } catch (e) {
    if (e instanceof RangeError) throw new UsageError(`--config: ${e.message}`, { cause: e });
    throw e;
  }
}

/**
 * Everything on stdin, as bytes.
 *
 * @example const bytes = await readAll(process.stdin);
 */
export async function readAll(stream: AsyncIterable<Uint8Array | string>): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : Buffer.from(chunk));
  }
  return new Uint8Array(Buffer.concat(chunks));
}

/**
 * A file's bytes, or stdin's when `path` is `-`.
 *
 * @throws UsageError naming the option when the file cannot be read
 * @example const bytes = await readInput('proof.bin', '--proof', io);
 */
export async function readInput(path: string, option: string, io: CliIo): Promise<Uint8Array> {
  if (path === '-') return readAll(io.stdin);
  try {
    return new Uint8Array(await readFile(path));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const reason =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (e as Error).message;
    throw new UsageError(`${option}: cannot read ${quote(path, 200)}: ${reason}`, { cause: e });
  }
}

/** The proof options every verify command takes. */
export interface ProofOptions {
  proof?: string;
  proofHex?: string;
}

/**
 * The proof's bytes from exactly one of `--proof <file|->` and `--proof-hex <hex|->`.
 *
 * @example const bytes = await readProof({ proof: '-' }, io);
 */
export async function readProof(opts: ProofOptions, io: CliIo): Promise<Uint8Array> {
  if (opts.proof !== undefined && opts.proofHex !== undefined) {
    throw new UsageError('give either --proof or --proof-hex, not both');
  }
  if (opts.proof !== undefined) return readInput(opts.proof, '--proof', io);
  if (opts.proofHex !== undefined) {
    const text =
      opts.proofHex === '-' ? Buffer.from(await readAll(io.stdin)).toString('utf8') : opts.proofHex;
    return parseHex(text, '--proof-hex');
  }
  throw new UsageError('a proof is required: --proof <file|-> or --proof-hex <hex|->');
}
