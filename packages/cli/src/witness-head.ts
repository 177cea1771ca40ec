/**
 * Head files: what `akd audit verify --heads` writes and `akd verify head` / `--signed-head`
 * read. A head file holds witness signatures in Plexi's JSON, one object, or JSON lines
 * appended as epochs are verified; the last line is the newest head.
 */

import { readFile } from 'node:fs/promises';
import { parseWitnessSignature, type WitnessSignature } from '@akd-ts/core';
import { quote } from './args.js';
import { UsageError } from './errors.js';

/**
 * The newest head of a head file (its last non-empty line, or its only JSON object).
 *
 * @throws UsageError when the file cannot be read or its last head is not JSON; AkdError
 * `WITNESS_DECODE` when that JSON is not a witness signature.
 */
export async function readWitnessHead(path: string, option: string): Promise<WitnessSignature> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new UsageError(`${option}: cannot read ${quote(path, 200)}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  let json: unknown;
  try {
    json = JSON.parse(text); // a single object, possibly over several lines
  } catch {
    const last = text
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '')
      .pop();
    try {
      json = JSON.parse(last ?? '');
    } catch {
      throw new UsageError(`${option}: ${quote(path, 200)} holds no JSON head`);
    }
  }
  return parseWitnessSignature(json);
}
