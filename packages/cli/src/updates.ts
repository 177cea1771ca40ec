/**
 * The update file of `akd publish`: JSON lines, each `{"label": ..., "value": ...}` with UTF-8
 * text or `{"labelHex": ..., "valueHex": ...}` with raw bytes (the two forms may be mixed per
 * field). Every mistake names its line, so a large file is easy to fix.
 */

import { utf8 } from '@akd-ts/core';
import type { Update } from '@akd-ts/directory';
import { parseHex } from './args.js';
import { UsageError } from './errors.js';

function field(record: Record<string, unknown>, name: 'label' | 'value', line: number): Uint8Array {
  const text = record[name];
  const hex = record[`${name}Hex`];
  if (text !== undefined && hex !== undefined) {
    throw new UsageError(`line ${line}: give either "${name}" or "${name}Hex", not both`);
  }
  if (typeof text === 'string') return utf8(text);
  if (typeof hex === 'string') return parseHex(hex, `line ${line}: ${name}Hex`);
  throw new UsageError(`line ${line}: "${name}" (text) or "${name}Hex" (hex) must be a string`);
}

/**
 * Parses JSON lines of updates; blank lines are skipped.
 *
 * @example parseUpdates('{"label":"alice","value":"k1"}\n').length // 1
 * @throws UsageError naming the line of the first malformed update
 */
export function parseUpdates(text: string): Update[] {
  const updates: Update[] = [];
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      throw new UsageError(`line ${i + 1}: not valid JSON`);
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      throw new UsageError(`line ${i + 1}: expected an object with a label and a value`);
    }
    const r = record as Record<string, unknown>;
    updates.push({ label: field(r, 'label', i + 1), value: field(r, 'value', i + 1) });
  });
  return updates;
}
