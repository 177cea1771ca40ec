/**
 * Append-only (audit) verification (spec 11.5). For each epoch step, the unchanged subtree
 * roots must rebuild the old root hash exactly, and those same subtrees plus the new leaves,
 * each bound to the step's end epoch, must rebuild the new one.
 *
 * The trees are rebuilt directly from the sorted element set (no storage), which gives the
 * same hash as upstream's Patricia insertion in Auditor mode (spec 8). Unlike upstream 0.12,
 * which silently dropped duplicate or nested labels while rebuilding (and so let a server
 * rewrite a value and still pass, fixed upstream in 0.13), such sets are rejected here, as are
 * labels with bits set beyond their length, inserted elements that are not full-length leaves,
 * and epoch steps that are not consecutive. Honest proofs never contain any of these.
 */

import { bytesEqual, toHex } from '../bytes.js';
import type { Configuration } from '../config/configuration.js';
import { AkdError } from '../errors.js';
import { LEAF_LEN, NodeLabel } from '../node-label.js';
import type { AppendOnlyProof, AzksElement, Digest, SingleAppendOnlyProof } from '../types.js';

function malformed(message: string): AkdError {
  return new AkdError('AUDIT_MALFORMED_PROOF', message);
}

/** True when `label` has a set bit at a position >= its length. */
function hasJunkBits(label: NodeLabel): boolean {
  return !label.getPrefix(label.len).equals(label);
}

/** Bit-string order in which a prefix sorts immediately before its extensions. */
function compareBits(a: NodeLabel, b: NodeLabel): number {
  const common = a.commonPrefixLength(b);
  const shorter = Math.min(a.len, b.len);
  if (common === shorter) return a.len - b.len;
  return a.getBit(common) - b.getBit(common);
}

/**
 * Sorts elements by bit string and rejects duplicates, prefixes and junk bits. In that order
 * any label that prefixes another is immediately followed by one it prefixes, so checking
 * neighbours finds every nesting.
 */
function sortedChecked(elements: AzksElement[]): AzksElement[] {
  for (const e of elements) {
    if (hasJunkBits(e.label)) throw malformed(`label ${e.label} has bits set beyond its length`);
    if (e.label.len === 0) throw malformed('an element claims the root label');
  }
  const sorted = elements.slice().sort((x, y) => compareBits(x.label, y.label));
  for (let i = 1; i < sorted.length; i++) {
    const a = sorted[i - 1]!.label;
    const b = sorted[i]!.label;
    if (a.isPrefixOf(b)) {
      throw malformed(
        a.len === b.len ? `label ${a} appears twice` : `label ${a} is a prefix of label ${b}`,
      );
    }
  }
  return sorted;
}

/**
 * The value and label of the compressed-trie node above `sorted[lo..hi)`, a non-empty range
 * of bit-sorted labels with no nesting: a single element is a leaf as given; otherwise the
 * node sits at the range's longest common prefix and splits at its next bit.
 */
function subtree(
  config: Configuration,
  sorted: AzksElement[],
  lo: number,
  hi: number,
): { label: NodeLabel; value: Uint8Array } {
  if (hi - lo === 1) return sorted[lo]!;
  const first = sorted[lo]!.label;
  const depth = first.commonPrefixLength(sorted[hi - 1]!.label);
  let mid = lo + 1;
  while (sorted[mid]!.label.getBit(depth) === 0) mid++;
  const left = subtree(config, sorted, lo, mid);
  const right = subtree(config, sorted, mid, hi);
  return {
    label: first.getPrefix(depth),
    value: config.computeParentHashFromChildren(
      left.value,
      config.nodeLabelValue(left.label),
      right.value,
      config.nodeLabelValue(right.label),
    ),
  };
}

/** The published root hash of the tree over already sorted and checked elements. */
function rootHashOfSorted(config: Configuration, sorted: AzksElement[]): Digest {
  if (sorted.length === 0) return config.computeRootHashFromVal(config.emptyRootValue);
  let mid = 0;
  while (mid < sorted.length && sorted[mid]!.label.getBit(0) === 0) mid++;
  const side = (lo: number, hi: number) =>
    lo === hi
      ? { value: config.emptyNodeHash, label: config.emptyLabel }
      : subtree(config, sorted, lo, hi);
  const left = side(0, mid);
  const right = side(mid, sorted.length);
  const rootValue = config.computeParentHashFromChildren(
    left.value,
    config.nodeLabelValue(left.label),
    right.value,
    config.nodeLabelValue(right.label),
  );
  return config.computeRootHashFromVal(rootValue);
}

/**
 * The published root hash of the tree whose leaves (or subtree roots) are `elements`, with
 * values used as given (spec 8, Auditor mode; spec 7.3 for the empty tree and missing children).
 *
 * @throws AkdError `AUDIT_MALFORMED_PROOF` for duplicate or nested labels.
 * @example rootHashOfElements(config, []) // the empty tree's root hash
 */
export function rootHashOfElements(config: Configuration, elements: AzksElement[]): Digest {
  return rootHashOfSorted(config, sortedChecked(elements));
}

/**
 * Verifies one epoch step: `proof` turns the tree with root `startHash` into the tree with
 * root `endHash`, inserting leaves at `endEpoch` (spec 11.5 `verify_consecutive_append_only`).
 * The labels of both sets together are checked first: the new tree is built from their union.
 *
 * @throws AkdError `AUDIT_MALFORMED_PROOF`, `AUDIT_START_HASH_MISMATCH` or
 * `AUDIT_END_HASH_MISMATCH`.
 */
export function verifyConsecutiveAppendOnly(
  config: Configuration,
  proof: SingleAppendOnlyProof,
  startHash: Digest,
  endHash: Digest,
  endEpoch: bigint,
): void {
  for (const e of proof.inserted) {
    if (e.label.len !== LEAF_LEN) throw malformed(`inserted element ${e.label} is not a leaf`);
  }
  const unchanged = new Set(proof.unchangedNodes);
  const inserted = proof.inserted.map((e) => ({
    label: e.label,
    value: config.hashLeafWithCommitment(e.value, endEpoch),
  }));
  const all = sortedChecked([...proof.unchangedNodes, ...inserted]);
  const before = rootHashOfSorted(
    config,
    all.filter((e) => unchanged.has(e)),
  );
  if (!bytesEqual(before, startHash)) {
    throw new AkdError(
      'AUDIT_START_HASH_MISMATCH',
      `unchanged nodes rebuild ${toHex(before)}, not the epoch ${endEpoch - 1n} root ${toHex(startHash)}`,
    );
  }
  const after = rootHashOfSorted(config, all);
  if (!bytesEqual(after, endHash)) {
    throw new AkdError(
      'AUDIT_END_HASH_MISMATCH',
      `unchanged nodes and inserted leaves rebuild ${toHex(after)}, not the epoch ${endEpoch} root ${toHex(endHash)}`,
    );
  }
}

/** What an audit verified. */
export interface AuditVerifyResult {
  /** First epoch of the chain (the epoch of `hashes[0]`). */
  startEpoch: bigint;
  /** Last epoch of the chain (the epoch of the last hash). */
  endEpoch: bigint;
}

/**
 * Verifies an append-only proof over the root hashes of consecutive epochs: `hashes[i]` is the
 * root at `proof.epochs[i]` and `hashes[i+1]` the root one epoch later (spec 11.5).
 *
 * @param options.startEpoch when given, the epoch `hashes[0]` belongs to; the proof must start there.
 * @throws AkdError `AUDIT_LENGTH_MISMATCH`, `AUDIT_EPOCH_GAP` or a per-step audit error.
 * @example auditVerify(config, [rootAt1, rootAt2], proof) // { startEpoch: 1n, endEpoch: 2n }
 */
export function auditVerify(
  config: Configuration,
  hashes: Digest[],
  proof: AppendOnlyProof,
  options: { startEpoch?: bigint } = {},
): AuditVerifyResult {
  if (proof.epochs.length !== proof.proofs.length) {
    throw new AkdError(
      'AUDIT_LENGTH_MISMATCH',
      `${proof.epochs.length} epochs for ${proof.proofs.length} proofs`,
    );
  }
  if (hashes.length !== proof.proofs.length + 1 || proof.proofs.length === 0) {
    throw new AkdError(
      'AUDIT_LENGTH_MISMATCH',
      `${hashes.length} hashes for ${proof.proofs.length} proofs: expected one more hash than proofs, and at least one proof`,
    );
  }
  const first = proof.epochs[0]!;
  if (options.startEpoch !== undefined && first !== options.startEpoch) {
    throw new AkdError(
      'AUDIT_EPOCH_GAP',
      `the proof starts at epoch ${first}, not ${options.startEpoch}`,
    );
  }
  proof.epochs.forEach((epoch, i) => {
    if (epoch !== first + BigInt(i)) {
      throw new AkdError(
        'AUDIT_EPOCH_GAP',
        `step ${i} starts at epoch ${epoch}, not ${first + BigInt(i)}`,
      );
    }
  });
  proof.proofs.forEach((step, i) => {
    verifyConsecutiveAppendOnly(config, step, hashes[i]!, hashes[i + 1]!, proof.epochs[i]! + 1n);
  });
  return { startEpoch: first, endEpoch: first + BigInt(proof.proofs.length) };
}
