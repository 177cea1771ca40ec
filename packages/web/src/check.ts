/**
 * What the page checks, without the DOM: decoding a served proof and verifying it with core
 * against a trusted root (spec 11.3, 11.4), and the path from the proven leaf up to the root
 * (spec 11.1) for display. Every failure becomes a verdict with core's error code, never an
 * exception, so the page always has something clear to say.
 */

import {
  AkdError,
  Direction,
  configurationByName,
  decodeHistoryProof,
  decodeLookupProof,
  fromHex,
  fromUtf8,
  isUtf8,
  isWellFormedText,
  keyHistoryVerify,
  lookupVerify,
  toHex,
  utf8,
  bytesEqual,
  type Configuration,
  type MembershipProof,
  type NodeLabel,
  type VerifyResult,
} from '@akd-ts/core';

/** What a client checks a proof against: a root hash at an epoch, and the directory's key. */
export interface TrustedRoot {
  config: Configuration;
  epoch: bigint;
  rootHash: Uint8Array;
  publicKey: Uint8Array;
}

/** The fields of `GET /v1/epoch` the page uses. */
export interface EpochInfo {
  epoch: string;
  rootHash: string;
  publicKey: string;
  configuration: { name: string; domainLabel: string | null };
}

/**
 * The trusted root from an epoch answer, or from a root hash the user pasted (with its epoch).
 *
 * @throws AkdError `DECODE_INVALID_VALUE` for a malformed hash or epoch
 * @example trustedRoot(await (await fetch('/v1/epoch')).json())
 */
export function trustedRoot(
  info: EpochInfo,
  pasted?: { rootHash: string; epoch: string },
): TrustedRoot {
  const hash = (pasted?.rootHash ?? info.rootHash).trim().toLowerCase();
  const epoch = (pasted?.epoch ?? info.epoch).trim();
  if (!/^[0-9a-f]{64}$/.test(hash)) {
    throw new AkdError('DECODE_INVALID_VALUE', 'a root hash is 64 hex digits (32 bytes)', {
      field: 'rootHash',
    });
  }
  if (!/^[0-9]{1,20}$/.test(epoch)) {
    throw new AkdError('DECODE_INVALID_VALUE', 'an epoch is a non-negative integer', {
      field: 'epoch',
    });
  }
  return {
    config: configurationByName(
      info.configuration.name,
      info.configuration.domainLabel ?? undefined,
    ),
    epoch: BigInt(epoch),
    rootHash: fromHex(hash),
    publicKey: fromHex(info.publicKey),
  };
}

/**
 * A label as typed: UTF-8 text, or raw bytes written `hex:<hex>` (the server's syntax).
 *
 * @throws AkdError `DECODE_INVALID_VALUE` for an empty label or malformed hex
 * @example parseLabel('hex:00ff') // Uint8Array [0, 255]
 */
export function parseLabel(text: string): Uint8Array {
  if (text.startsWith('hex:')) {
    const hex = text.slice(4).replace(/\s+/g, '');
    if (!/^(?:[0-9a-fA-F]{2})+$/.test(hex)) {
      throw new AkdError('DECODE_INVALID_VALUE', 'after hex: write an even number of hex digits', {
        field: 'label',
      });
    }
    return fromHex(hex);
  }
  if (text.length === 0)
    throw new AkdError('DECODE_INVALID_VALUE', 'type a label', { field: 'label' });
  if (!isWellFormedText(text)) {
    // UTF-8 would turn it into U+FFFD: another label than the one typed
    throw new AkdError(
      'DECODE_INVALID_VALUE',
      'the label holds a lone surrogate, which is not text: write its bytes as hex:<hex>',
      { field: 'label' },
    );
  }
  return utf8(text);
}

/**
 * The URL path segment of a label: percent-encoded text, or `hex:` for non-text bytes.
 *
 * @example labelPath(utf8('a/b')) // 'a%2Fb'
 */
export function labelPath(label: Uint8Array): string {
  return isUtf8(label) ? encodeURIComponent(fromUtf8(label)) : `hex:${toHex(label)}`;
}

// control, format, private-use and line-breaking characters could disguise a value
const UNSAFE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u;

/**
 * Bytes for display: the text when it is safe to show, else `hex:<hex>`.
 *
 * @example display(utf8('alice')) // 'alice'
 */
export function display(bytes: Uint8Array): string {
  if (bytes.length === 0) return '(empty)';
  if (isUtf8(bytes)) {
    const text = fromUtf8(bytes);
    if (!UNSAFE.test(text) && !text.startsWith('hex:') && text.trim() === text) return text;
  }
  return `hex:${toHex(bytes)}`;
}

/** One level of a membership path, leaf side first. */
export interface PathLevel {
  /** The node on the path at this level: its label's length in bits and its bits. */
  node: string;
  /** Which side of its parent the path node is on. */
  side: 'left' | 'right';
  /** The sibling hanging next to the path. */
  sibling: string;
  siblingHash: string;
  /** The parent's hash value, computed from the two children. */
  parentValue: string;
}

/** The path a membership proof takes from its leaf to the root, recomputed. */
export interface PathView {
  leafValue: string;
  levels: PathLevel[];
  /** The root hash the path leads to, and whether it is the trusted one. */
  computedRoot: string;
  matchesTrustedRoot: boolean;
}

/**
 * A node label as its leading bits (at most 24, then an ellipsis) and its length.
 *
 * @example bits(new NodeLabel(new Uint8Array(32).fill(0xf0), 6)) // '111100 (6 bits)'
 */
export function bits(label: NodeLabel): string {
  let out = '';
  for (let i = 0; i < Math.min(label.len, 24); i++) out += String(label.getBit(i));
  if (label.len === 0) out = 'root';
  return `${out}${label.len > 24 ? '…' : ''} (${label.len} bit${label.len === 1 ? '' : 's'})`;
}

/**
 * Recomputes a membership path leaf to root, as verifyMembership does (spec 11.1), keeping
 * each level for display.
 *
 * @example pathView(config, proof.existenceProof, trusted.rootHash).matchesTrustedRoot
 */
export function pathView(
  config: Configuration,
  proof: MembershipProof,
  rootHash: Uint8Array,
): PathView {
  let value = proof.hashVal;
  let label = proof.label;
  const levels: PathLevel[] = [];
  for (let i = proof.siblingProofs.length - 1; i >= 0; i--) {
    const level = proof.siblingProofs[i]!;
    const sibling = level.siblings[0];
    const own = config.nodeLabelValue(label);
    const other = config.nodeLabelValue(sibling.label);
    const left = level.direction === Direction.Left;
    const parent = left
      ? config.computeParentHashFromChildren(value, own, sibling.value, other)
      : config.computeParentHashFromChildren(sibling.value, other, value, own);
    levels.push({
      node: bits(label),
      side: left ? 'left' : 'right',
      sibling: bits(sibling.label),
      siblingHash: toHex(sibling.value),
      parentValue: toHex(parent),
    });
    value = parent;
    label = level.label;
  }
  const root = config.computeRootHashFromVal(value);
  return {
    leafValue: toHex(proof.hashVal),
    levels,
    computedRoot: toHex(root),
    matchesTrustedRoot: bytesEqual(root, rootHash),
  };
}

/** A verdict: verified, with what the proof shows, or not, with core's code and reason. */
export type Verdict<T> =
  | { verified: true; result: T; path?: PathView }
  | { verified: false; code: string; reason: string; path?: PathView };

function failure(e: unknown, path?: PathView): Verdict<never> {
  if (e instanceof AkdError) {
    return { verified: false, code: e.code, reason: e.message, ...(path ? { path } : {}) };
  }
  // core raises AkdError for untrusted input; anything else is a bug worth naming plainly
  return {
    verified: false,
    code: 'UNEXPECTED',
    reason: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
    ...(path ? { path } : {}),
  };
}

/**
 * Decodes and verifies a served lookup proof against `trusted`.
 *
 * @example
 * ```ts
 * const verdict = checkLookup(trusted, label, new Uint8Array(await res.arrayBuffer()));
 * if (verdict.verified) show(verdict.result.value);
 * ```
 */
export function checkLookup(
  trusted: TrustedRoot,
  label: Uint8Array,
  proofBytes: Uint8Array,
): Verdict<VerifyResult> {
  let path: PathView | undefined;
  try {
    const proof = decodeLookupProof(proofBytes);
    path = pathView(trusted.config, proof.existenceProof, trusted.rootHash);
    const result = lookupVerify(
      trusted.config,
      trusted.publicKey,
      trusted.rootHash,
      trusted.epoch,
      label,
      proof,
    );
    return { verified: true, result, path };
  } catch (e) {
    return failure(e, path);
  }
}

/**
 * Decodes and verifies a served key history proof (all versions, or the `mostRecent`).
 *
 * @example checkHistory(trusted, label, bytes).verified
 */
export function checkHistory(
  trusted: TrustedRoot,
  label: Uint8Array,
  proofBytes: Uint8Array,
  mostRecent?: number,
): Verdict<VerifyResult[]> {
  try {
    const proof = decodeHistoryProof(proofBytes);
    const result = keyHistoryVerify(
      trusted.config,
      trusted.publicKey,
      trusted.rootHash,
      trusted.epoch,
      label,
      proof,
      {
        historyParams:
          mostRecent === undefined
            ? { kind: 'complete' }
            : { kind: 'mostRecent', count: mostRecent },
        // a tombstoned (erased) value is shown as erased, not as a failure
        allowMissingValues: true,
      },
    );
    return { verified: true, result };
  } catch (e) {
    return failure(e);
  }
}
