/**
 * How results are printed: as lines of text for people, or as one line of JSON for scripts.
 * Labels and values are untrusted bytes from a directory, so text output shows them as text
 * only when that cannot mislead a terminal (valid UTF-8 without control, format or
 * line-separator characters, no surrounding spaces); anything else is printed as `hex:<hex>`,
 * the same syntax `--label` accepts.
 */

import {
  ExperimentalConfiguration,
  fromUtf8,
  isUtf8,
  toHex,
  witnessSignatureToJson,
  type AuditVerifyResult,
  type Configuration,
  type VerifyResult,
} from '@akd-ts/core';
import { rootStatement, type TrustedRoot } from './trusted-root.js';

/** JSON data that may hold bigints (epochs and versions are unsigned 64-bit). */
export type Json = string | number | boolean | null | bigint | Json[] | { [key: string]: Json };

/**
 * Serializes to one line of JSON, writing bigints as exact JSON numbers (JSON.stringify
 * throws on them, and converting to Number would round epochs above 2^53).
 *
 * @example toJson({ epoch: 48n }) // '{"epoch":48}'
 */
export function toJson(value: Json): string {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const fields = Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}:${toJson(v)}`);
    return `{${fields.join(',')}}`;
  }
  return JSON.stringify(value);
}

// Cc: controls (including ESC, which drives terminals); Cf: format characters such as
// right-to-left overrides; Co/Cn: private use and unassigned; Zl/Zp: line breaks.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;

/**
 * Bytes for a text line: the text itself when it is safe to show, else `hex:<hex>`.
 *
 * @example displayBytes(utf8('16,48')) // '16,48'
 * @example displayBytes(new Uint8Array([0, 1])) // 'hex:0001'
 */
export function displayBytes(bytes: Uint8Array): string {
  if (bytes.length === 0) return '(empty)';
  if (isUtf8(bytes)) {
    const text = fromUtf8(bytes);
    const ambiguous = text.startsWith('hex:') || text === '(empty)' || text.trim() !== text;
    if (!ambiguous && !UNSAFE.test(text)) return text;
  }
  return `hex:${toHex(bytes)}`;
}

/**
 * Bytes for JSON: `text` is the UTF-8 decoding (JSON escapes control characters) or null when
 * the bytes are not UTF-8; `hex` is always given.
 *
 * @example jsonBytes(utf8('16')) // { text: '16', hex: '3136' }
 */
export function jsonBytes(bytes: Uint8Array): { text: string | null; hex: string } {
  return { text: isUtf8(bytes) ? fromUtf8(bytes) : null, hex: toHex(bytes) };
}

/** What a client verification was asked, echoed in its output. */
export interface ClientQuery {
  config: Configuration;
  label: Uint8Array;
  /** The root checked against, its epoch, and where that epoch comes from. */
  trusted: TrustedRoot;
}

function configJson(config: Configuration): { [key: string]: Json } {
  // the domain label changes every hash of the experimental configuration, so report it
  if (!(config instanceof ExperimentalConfiguration)) return { configuration: config.name };
  const domain = jsonBytes(config.domainLabel);
  return { configuration: config.name, domainLabel: domain.text ?? `hex:${domain.hex}` };
}

function queryJson(q: ClientQuery): { [key: string]: Json } {
  const label = jsonBytes(q.label);
  const { root, rootEpoch, source } = q.trusted;
  return {
    ...configJson(q.config),
    label: label.text,
    labelHex: label.hex,
    rootHash: toHex(root),
    rootEpoch,
    // 'caller': the epoch is the caller's word; 'signed-head': an auditor's signature binds it
    rootEpochFrom: source.kind,
    ...(source.kind === 'signed-head'
      ? { signedHead: witnessSignatureToJson(source.head) as { [key: string]: Json } }
      : {}),
  };
}

function resultJson(r: VerifyResult): { [key: string]: Json } {
  const value = jsonBytes(r.value);
  return { epoch: r.epoch, version: r.version, value: value.text, valueHex: value.hex };
}

/**
 * The output of a verified lookup.
 *
 * @example
 * formatLookup(query, result, false)
 * // 'lookup verified: label 16 (whatsapp_v1)\nchecked against root hash ...\nepoch: 48\nversion: 3\nvalue: 16,48\n'
 */
export function formatLookup(q: ClientQuery, r: VerifyResult, json: boolean): string {
  if (json)
    return `${toJson({ proof: 'lookup', verified: true, ...queryJson(q), ...resultJson(r) })}\n`;
  return [
    `lookup verified: label ${displayBytes(q.label)} (${q.config.name})`,
    rootStatement(q.trusted),
    `epoch: ${r.epoch}`,
    `version: ${r.version}`,
    `value: ${displayBytes(r.value)}`,
    '',
  ].join('\n');
}

/**
 * The output of a verified key history, newest version first.
 *
 * @example formatHistory(query, results, true) // '{"proof":"history",...,"versions":[...]}\n'
 */
export function formatHistory(q: ClientQuery, rs: VerifyResult[], json: boolean): string {
  if (json) {
    const versions = rs.map(resultJson);
    return `${toJson({ proof: 'history', verified: true, ...queryJson(q), versions })}\n`;
  }
  const count = `${rs.length} version${rs.length === 1 ? '' : 's'}`;
  return [
    `history verified: label ${displayBytes(q.label)} (${q.config.name}), ${count}, newest first`,
    rootStatement(q.trusted),
    ...rs.map((r) => `version ${r.version}: epoch ${r.epoch}, value ${displayBytes(r.value)}`),
    '',
  ].join('\n');
}

/** What an audit was checked against: the root hashes given, and whether --start-epoch was. */
export interface AuditQuery {
  config: Configuration;
  hashes: Uint8Array[];
  startEpochGiven: boolean;
}

/**
 * The output of a verified append-only audit. The root hashes are the caller's; the epochs
 * they are given come from the proof, checked against --start-epoch when it was given.
 *
 * @example formatAudit({ config, hashes, startEpochGiven: true }, { startEpoch: 1n, endEpoch: 2n }, false)
 * // 'audit verified: epochs 1 -> 2 (whatsapp_v1), 1 append-only step\nfrom root hash ...'
 */
export function formatAudit(q: AuditQuery, r: AuditVerifyResult, json: boolean): string {
  const steps = r.endEpoch - r.startEpoch;
  const first = toHex(q.hashes[0]!);
  const last = toHex(q.hashes[q.hashes.length - 1]!);
  const epochsFrom = q.startEpochGiven ? 'start-epoch' : 'proof';
  if (json) {
    const fields = { startEpoch: r.startEpoch, endEpoch: r.endEpoch, steps };
    const roots = { firstRootHash: first, lastRootHash: last, epochsFrom };
    return `${toJson({ proof: 'audit', verified: true, ...configJson(q.config), ...fields, ...roots })}\n`;
  }
  const count = `${steps} append-only step${steps === 1n ? '' : 's'}`;
  const epochs = q.startEpochGiven
    ? `epoch ${r.startEpoch} as --start-epoch requires`
    : `epoch ${r.startEpoch} by the proof's own numbering: pass --start-epoch to check it`;
  return (
    `audit verified: epochs ${r.startEpoch} -> ${r.endEpoch} (${q.config.name}), ${count}\n` +
    `from root hash ${first} (${epochs}) to root hash ${last}\n`
  );
}
