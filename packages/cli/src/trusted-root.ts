/**
 * The root a client proof (lookup, history) is checked against, and where its epoch comes
 * from. A proof shows that a value is in the tree with that root hash; it does not show which
 * epoch the root is (upstream's verifier takes the epoch as given too). So the epoch is either
 * the caller's word (--root with --epoch), or bound to the root by an auditor's signed head
 * (--signed-head, checked with the auditor's public key --auditor-key), and the output says
 * which.
 */

import { AkdError, toHex, verifyWitnessSignature, type WitnessSignature } from '@akd-ts/core';
import { parseEpoch, parseHex } from './args.js';
import { UsageError } from './errors.js';
import { readWitnessHead } from './witness-head.js';

/** Where the pairing of a root hash with its epoch comes from. */
export type RootSource =
  | { kind: 'caller' }
  | { kind: 'store' }
  | { kind: 'signed-head'; head: WitnessSignature; auditorKey: Uint8Array };

/** A root hash, its epoch, and why that epoch is believed. */
export interface TrustedRoot {
  root: Uint8Array;
  rootEpoch: bigint;
  source: RootSource;
}

export interface RootOptions {
  root?: string;
  epoch?: string;
  signedHead?: string;
  auditorKey?: string;
}

/**
 * A witness signs an akd log's root hash as its digest: anything but 32 bytes is no root.
 * @throws AkdError `DECODE_INVALID_LENGTH`
 */
export function checkRootDigest(head: WitnessSignature): void {
  if (head.digest.length !== 32) {
    throw new AkdError(
      'DECODE_INVALID_LENGTH',
      `the signed head's digest is ${head.digest.length} bytes, not a 32-byte root hash`,
      { field: 'digest' },
    );
  }
}

/**
 * The root of a client check: from --root and --epoch, or from a signed head whose signature
 * is checked (then --root and --epoch, when also given, must be the head's).
 * @throws UsageError for missing or conflicting options; AkdError `WITNESS_*` when the head
 * is not a witness signature by --auditor-key, `DECODE_INVALID_LENGTH` when its digest is not a
 * 32-byte root
 */
export async function trustedRoot(opts: RootOptions): Promise<TrustedRoot> {
  const root = opts.root === undefined ? undefined : parseHex(opts.root, '--root', 32);
  const epoch = opts.epoch === undefined ? undefined : parseEpoch(opts.epoch, '--epoch');
  if (opts.signedHead === undefined) {
    if (opts.auditorKey !== undefined) throw new UsageError('--auditor-key needs --signed-head');
    if (root === undefined || epoch === undefined) {
      throw new UsageError(
        'give the root to check against: --root <hex> with --epoch <n>, or --signed-head <file> with --auditor-key <hex>',
      );
    }
    return { root, rootEpoch: epoch, source: { kind: 'caller' } };
  }
  if (opts.auditorKey === undefined) {
    throw new UsageError(
      '--signed-head needs --auditor-key, the public key of the auditor you trust',
    );
  }
  const auditorKey = parseHex(opts.auditorKey, '--auditor-key', 32);
  const head = await readWitnessHead(opts.signedHead, '--signed-head');
  verifyWitnessSignature(head, auditorKey);
  checkRootDigest(head);
  if (root !== undefined && toHex(root) !== toHex(head.digest)) {
    throw new UsageError(`--root: the signed head's root hash is ${toHex(head.digest)}`);
  }
  if (epoch !== undefined && epoch !== head.epoch) {
    throw new UsageError(`--epoch: the signed head is for epoch ${head.epoch}`);
  }
  return {
    root: head.digest,
    rootEpoch: head.epoch,
    source: { kind: 'signed-head', head, auditorKey },
  };
}

/**
 * What a check was made against, in words, for the line after the verdict.
 *
 * @example rootStatement({ root, rootEpoch: 49n, source: { kind: 'caller' } }, 'lookup')
 */
export function rootStatement(t: TrustedRoot): string {
  const hash = toHex(t.root);
  switch (t.source.kind) {
    case 'caller':
      return (
        `checked against root hash ${hash}, which you gave as the root of epoch ${t.rootEpoch}: ` +
        'the proof does not show which epoch a root is, so that epoch is only as good as its source'
      );
    case 'store':
      return `checked against root hash ${hash}, the store's root of epoch ${t.rootEpoch}`;
    case 'signed-head': {
      const h = t.source.head;
      // a u64 of milliseconds may lie beyond what a Date can show
      const ms = Number(h.timestamp);
      const at = ms <= 8.64e15 ? new Date(ms).toISOString() : `${h.timestamp} ms after 1970`;
      return (
        `checked against root hash ${hash}, the root of epoch ${t.rootEpoch} in a head signed by ` +
        `auditor ${toHex(t.source.auditorKey)} for ${JSON.stringify(h.namespace)} at ${at}`
      );
    }
  }
}
