/**
 * Labels in messages: people type labels as text, so an error about a label shows that text,
 * quoted, rather than its bytes or the tree position its VRF gives it. Characters that would
 * not print, or would change how a terminal shows the line, are escaped; bytes that are not
 * UTF-8 are shown as `hex:<hex>`, the form the CLI accepts back.
 */

import { fromUtf8, isUtf8, toHex } from './bytes.js';

// Cc: controls (including ESC); Cf: format characters such as right-to-left overrides;
// Co/Cn: private use and unassigned; Zl/Zp: line breaks; Zs other than the space
const UNPRINTABLE =
  /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/gu;

/** Labels longer than this many characters are cut, with `...` marking the cut. */
const MAX_CHARS = 64;

/**
 * A label for a message: `"alice"` (quoted, with `"`, `\` and unprintable characters
 * escaped), or `hex:00ff` when the bytes are not UTF-8.
 *
 * @example describeLabel(utf8('alice')) // '"alice"'
 * @example describeLabel(utf8('a\u202eb')) // '"a\\u{202e}b"'
 * @example describeLabel(new Uint8Array([0xff])) // 'hex:ff'
 */
export function describeLabel(label: Uint8Array): string {
  if (!isUtf8(label)) {
    const hex = toHex(label.subarray(0, MAX_CHARS / 2));
    return `hex:${hex}${label.length > MAX_CHARS / 2 ? '...' : ''}`;
  }
  const chars = [...fromUtf8(label)];
  const shown = chars.slice(0, MAX_CHARS).join('');
  const escaped = shown
    .replace(/[\\"]/g, (c) => `\\${c}`)
    .replace(UNPRINTABLE, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
  return `"${escaped}${chars.length > MAX_CHARS ? '...' : ''}"`;
}
