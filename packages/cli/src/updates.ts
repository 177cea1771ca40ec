/**
 * The update file of `akd publish`: JSON lines, each `{"label": ..., "value": ...}` with UTF-8
 * text or `{"labelHex": ..., "valueHex": ...}` with raw bytes (the two forms may be mixed per
 * field). Text is strict: a line that is not valid UTF-8, or a string holding a lone surrogate
 * (`"\ud800"`), is refused instead of becoming U+FFFD (which would make different inputs the
 * same label); bytes go through the hex fields. The publish limits of the directory are checked
 * here too, so that every mistake names its line and a large file is easy to fix.
 */

import { AkdError, carvedCopy, carvedUtf8, isUtf8, isWellFormedText, toHex } from '@akd-ts/core';
import { DEFAULT_LIMITS, type PublishLimits, type Update } from '@akd-ts/directory';
import { parseHex } from './args.js';
import { UsageError } from './errors.js';
import { displayBytes } from './output.js';

/** Bytes in a message: quoted text when they are safe to show as text, else `hex:<hex>`. */
export function describeBytes(bytes: Uint8Array, max = 60): string {
  const shown = displayBytes(bytes);
  if (shown.startsWith('hex:'))
    return shown.length > max + 4 ? `${shown.slice(0, max + 4)}...` : shown;
  return JSON.stringify(shown.length > max ? `${shown.slice(0, max)}...` : shown);
}

function field(record: Record<string, unknown>, name: 'label' | 'value', line: number): Uint8Array {
  const text = record[name];
  const hex = record[`${name}Hex`];
  if (text !== undefined && hex !== undefined) {
    throw new UsageError(`line ${line}: give either "${name}" or "${name}Hex", not both`);
  }
  if (typeof text === 'string') {
    if (!isWellFormedText(text)) {
      throw new UsageError(
        `line ${line}: "${name}" holds a lone surrogate, which is not text; write bytes as "${name}Hex"`,
      );
    }
    // carved: an update file holds many short fields (core slab.ts)
    return carvedUtf8(text);
  }
  if (typeof hex === 'string') return carvedCopy(parseHex(hex, `line ${line}: ${name}Hex`));
  throw new UsageError(`line ${line}: "${name}" (text) or "${name}Hex" (hex) must be a string`);
}

/** The directory's publish rules, checked per line (the directory checks them again). */
function checkLimits(update: Update, line: number, limits: PublishLimits): void {
  const { label, value } = update;
  if (label.length === 0 || label.length > limits.maxLabelBytes) {
    throw new AkdError(
      'DIRECTORY_LIMIT',
      `line ${line}: a label must have 1 to ${limits.maxLabelBytes} bytes, not ${label.length}`,
    );
  }
  if (value.length > limits.maxValueBytes) {
    throw new AkdError(
      'DIRECTORY_LIMIT',
      `line ${line}: the value of label ${describeBytes(label)} has ${value.length} bytes, more than ${limits.maxValueBytes}`,
    );
  }
  if (value.length === 0 && !limits.allowEmptyValues) {
    throw new AkdError(
      'DIRECTORY_LIMIT',
      `line ${line}: the value of label ${describeBytes(label)} is empty, which verifiers cannot tell from a deleted one`,
    );
  }
}

/** The lines of `bytes` (split at \n, a trailing \r dropped), numbered from 1. */
function* lines(bytes: Uint8Array): Generator<{ bytes: Uint8Array; number: number }> {
  let start = 0;
  let number = 1;
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0x0a) {
      const end = i > start && bytes[i - 1] === 0x0d ? i - 1 : i;
      if (i < bytes.length || end > start) yield { bytes: bytes.subarray(start, end), number };
      start = i + 1;
      number++;
    }
  }
}

/**
 * Parses JSON lines of updates; blank lines are skipped.
 *
 * @example parseUpdates(utf8('{"label":"alice","value":"k1"}\n')).length // 1
 * @throws UsageError naming the line of the first malformed update; AkdError
 * `DIRECTORY_DUPLICATE_LABEL` naming both lines of a repeated label, or `DIRECTORY_LIMIT`
 * naming the line of an update the directory would refuse
 */
export function parseUpdates(bytes: Uint8Array, limits: PublishLimits = DEFAULT_LIMITS): Update[] {
  const updates: Update[] = [];
  const firstLine = new Map<string, number>();
  for (const { bytes: raw, number } of lines(bytes)) {
    if (!isUtf8(raw)) throw new UsageError(`line ${number}: not valid UTF-8 text`);
    const line = new TextDecoder().decode(raw).trim();
    if (line === '') continue;
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      throw new UsageError(`line ${number}: not valid JSON`);
    }
    if (record === null || typeof record !== 'object' || Array.isArray(record)) {
      throw new UsageError(`line ${number}: expected an object with a label and a value`);
    }
    const r = record as Record<string, unknown>;
    const update = { label: field(r, 'label', number), value: field(r, 'value', number) };
    checkLimits(update, number, limits);
    const key = toHex(update.label);
    const seen = firstLine.get(key);
    if (seen !== undefined) {
      throw new AkdError(
        'DIRECTORY_DUPLICATE_LABEL',
        `lines ${seen} and ${number}: label ${describeBytes(update.label)} appears twice; a publish takes each label once`,
      );
    }
    firstLine.set(key, number);
    updates.push(update);
  }
  if (updates.length > limits.maxUpdates) {
    throw new AkdError(
      'DIRECTORY_LIMIT',
      `${updates.length} updates exceed the limit of ${limits.maxUpdates}`,
    );
  }
  return updates;
}
