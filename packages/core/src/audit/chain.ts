/**
 * A chain of audit blobs (spec 16): verified one after another, each blob must start where the
 * previous one ended. A blob alone only proves "some tree with root A grew append-only into
 * some tree with root B"; the chain is what makes a whole history auditable: epochs follow
 * each other with none skipped (AUDIT_EPOCH_GAP), and each blob's previous root is the root
 * the chain already verified for that epoch (AUDIT_CHAIN_BROKEN: the server showed two
 * different trees for one epoch). The chain starts at a trusted head (an anchor), at the empty
 * tree when it begins at epoch 0, or, failing both, at the first blob's previous root (trust
 * on first use, which the caller should report).
 */

import { bytesEqual, toHex } from '../bytes.js';
import type { Configuration } from '../config/configuration.js';
import { AkdError } from '../errors.js';
import type { Digest } from '../types.js';
import {
  inBlob,
  stepStartOfBlob,
  verifyAuditBlob,
  type AuditBlob,
  type AuditBlobNaming,
  type VerifiedAuditBlob,
  type VerifyAuditBlobOptions,
} from './blob.js';
import type { AuditBlobName } from './blob-name.js';

/** An epoch and its root hash: what an auditor has verified (or trusts). */
export interface AuditHead {
  epoch: bigint;
  rootHash: Digest;
}

export interface AuditChainOptions {
  /**
   * `end` or `start` pins the naming of every blob; `auto` (the default) takes it from the
   * first blob that settles it (spec 16: only one reading verifies a blob that inserts
   * anything) and holds every later blob to it.
   */
  naming?: AuditBlobNaming | 'auto';
  /** A trusted head to start from (a root checked out of band, or a saved state). */
  anchor?: AuditHead;
}

/**
 * Verifies blobs in epoch order and keeps the last verified head.
 *
 * @example
 * ```ts
 * const chain = new AuditChain(new WhatsAppV1Configuration(), { anchor: { epoch: 0n, rootHash: emptyRoot } });
 * for (const blob of blobs) chain.verify(blob);
 * chain.head; // { epoch, rootHash } of the last verified epoch
 * ```
 */
export class AuditChain {
  private current: AuditHead | undefined;
  private fixedNaming: AuditBlobNaming | undefined;
  private count = 0;
  /** True when the chain's first root was taken from a blob rather than an anchor. */
  private firstUse = false;

  /**
   * @throws RangeError when the anchor is at epoch 0 with a root other than the empty tree's.
   */
  constructor(
    readonly config: Configuration,
    options: AuditChainOptions = {},
  ) {
    const naming = options.naming ?? 'auto';
    if (naming !== 'auto' && naming !== 'start' && naming !== 'end') {
      throw new RangeError(`naming must be start, end or auto, got ${String(naming)}`);
    }
    this.fixedNaming = naming === 'auto' ? undefined : naming;
    if (options.anchor !== undefined) {
      const { epoch, rootHash } = options.anchor;
      if (rootHash.length !== 32) throw new RangeError('anchor.rootHash must be 32 bytes');
      if (epoch === 0n && !bytesEqual(rootHash, this.emptyRoot())) {
        throw new RangeError(
          `anchor: the root at epoch 0 is the empty tree's, ${toHex(this.emptyRoot())}`,
        );
      }
      this.current = { epoch, rootHash: rootHash.slice() };
    }
  }

  /** The last verified epoch and its root (the anchor before any blob), if any. */
  get head(): AuditHead | undefined {
    return this.current && { epoch: this.current.epoch, rootHash: this.current.rootHash.slice() };
  }

  /** The blobs' naming, once pinned or settled. */
  get naming(): AuditBlobNaming | undefined {
    return this.fixedNaming;
  }

  /** Blobs verified so far. */
  get verified(): number {
    return this.count;
  }

  /** True when the chain started from the first blob's own previous root (no anchor). */
  get trustedOnFirstUse(): boolean {
    return this.firstUse;
  }

  /**
   * The name epochs that can hold the next step, the likelier first; undefined before the
   * first blob of a chain without an anchor (any epoch can start it).
   *
   * @example new AuditChain(config, { naming: 'end', anchor: { epoch: 5n, rootHash } }).nextBlobEpochs() // [6n]
   */
  nextBlobEpochs(): bigint[] | undefined {
    if (this.current === undefined) return undefined;
    const e = this.current.epoch;
    if (this.fixedNaming === 'end') return [e + 1n];
    if (this.fixedNaming === 'start') return [e];
    return [e + 1n, e];
  }

  /** True when `name` starts from the chain's head root (a cheap pre-check, no proof checked). */
  startsAtHead(name: AuditBlobName): boolean {
    return this.current !== undefined && bytesEqual(name.previousHash, this.current.rootHash);
  }

  private emptyRoot(): Digest {
    return this.config.computeRootHashFromVal(this.config.emptyRootValue);
  }

  /** The links a blob of the step `start -> start + 1` must have to the chain. */
  private checkLinks(name: AuditBlobName, start: bigint): void {
    const head =
      this.current ?? (start === 0n ? { epoch: 0n, rootHash: this.emptyRoot() } : undefined);
    if (head === undefined) return;
    if (start !== head.epoch) {
      throw new AkdError(
        'AUDIT_EPOCH_GAP',
        start > head.epoch
          ? `the blob proves the step ${start} -> ${start + 1n}, but the chain is verified up to epoch ${head.epoch}: the steps from epoch ${head.epoch} to ${start} are missing`
          : `the blob proves the step ${start} -> ${start + 1n}, but the chain is already verified up to epoch ${head.epoch}`,
      );
    }
    if (!bytesEqual(name.previousHash, head.rootHash)) {
      throw new AkdError(
        'AUDIT_CHAIN_BROKEN',
        this.current === undefined
          ? `the blob starts epoch 0 from root ${toHex(name.previousHash)}, but epoch 0 is the empty tree, whose root is ${toHex(head.rootHash)}`
          : `the blob starts epoch ${start} from root ${toHex(name.previousHash)}, but the verified chain has root ${toHex(head.rootHash)} at that epoch`,
      );
    }
  }

  /** With the naming still open, the reading an ambiguous blob is given: the chain's position decides. */
  private preferFor(name: AuditBlobName): AuditBlobNaming {
    if (this.current !== undefined && name.epoch === this.current.epoch) return 'start';
    return 'end';
  }

  /**
   * The options a blob named `name` is verified under as the chain's next blob: the chain's
   * naming once settled, otherwise `auto`, preferring the reading the chain's position makes
   * likelier. {@link accept} expects a verification made under exactly these.
   */
  verifyOptions(name: AuditBlobName): VerifyAuditBlobOptions {
    return { naming: this.fixedNaming ?? 'auto', prefer: this.preferFor(name) };
  }

  /**
   * Verifies the next blob of the chain and advances the head to its end epoch.
   *
   * @throws AkdError `AUDIT_EPOCH_GAP` (the blob does not start at the head's epoch),
   * `AUDIT_CHAIN_BROKEN` (it starts from another root), or any error of
   * {@link verifyAuditBlob}; the chain is unchanged after an error.
   * @example chain.verify(blob).endEpoch // the new head's epoch
   */
  verify(blob: AuditBlob): VerifiedAuditBlob {
    return this.settle(blob, () =>
      verifyAuditBlob(this.config, blob, this.verifyOptions(blob.name)),
    );
  }

  /**
   * Advances the chain with the next blob, verified elsewhere (a worker thread, say) under
   * `verifyOptions(blob.name)`: `outcome` is that verification's result or its error. The
   * chain's checks, errors and state are exactly those of {@link verify}.
   *
   * @throws AkdError as {@link verify}
   * @example chain.accept(blob, await verifyOnWorker(blob, chain.verifyOptions(blob.name)))
   */
  accept(blob: AuditBlob, outcome: VerifiedAuditBlob | AkdError): VerifiedAuditBlob {
    return this.settle(blob, () => {
      if (outcome instanceof AkdError) throw outcome;
      return outcome;
    });
  }

  /** `verify` with the verification itself given: the chain's checks around it. */
  private settle(blob: AuditBlob, verification: () => VerifiedAuditBlob): VerifiedAuditBlob {
    const { name } = blob;
    // With a known naming, the cheap checks come first and name the real problem (a missing
    // epoch, a forked root) rather than a proof that fails against the wrong root.
    const knownStart =
      this.fixedNaming === undefined ? undefined : stepStartOfBlob(name.epoch, this.fixedNaming);
    if (knownStart !== undefined) {
      try {
        this.checkLinks(name, knownStart);
      } catch (e) {
        throw inBlob(name, e);
      }
    }
    const verified = verification();
    if (knownStart === undefined) {
      try {
        this.checkLinks(name, verified.startEpoch);
      } catch (e) {
        throw inBlob(name, e);
      }
    }
    if (this.current === undefined && verified.startEpoch !== 0n) this.firstUse = true;
    this.fixedNaming ??= verified.naming;
    this.current = { epoch: verified.endEpoch, rootHash: name.currentHash.slice() };
    this.count++;
    return verified;
  }
}

/** What {@link verifyAuditChain} verified. */
export interface AuditChainResult {
  /** The head before the first blob (the anchor, or the first blob's previous root). */
  first: AuditHead;
  /** The head after the last blob. */
  last: AuditHead;
  naming: AuditBlobNaming;
  verified: number;
}

/**
 * Verifies a whole list of blobs as one chain, sorted by epoch first.
 *
 * @throws AkdError as {@link AuditChain.verify}, or `AUDIT_LENGTH_MISMATCH` for no blobs.
 * @example verifyAuditChain(config, blobs, { anchor: { epoch: 0n, rootHash: emptyRoot } }).last.epoch
 */
export function verifyAuditChain(
  config: Configuration,
  blobs: AuditBlob[],
  options: AuditChainOptions = {},
): AuditChainResult {
  if (blobs.length === 0) throw new AkdError('AUDIT_LENGTH_MISMATCH', 'no blobs to verify');
  const sorted = blobs
    .slice()
    .sort((a, b) => (a.name.epoch < b.name.epoch ? -1 : a.name.epoch > b.name.epoch ? 1 : 0));
  const chain = new AuditChain(config, options);
  let first = chain.head;
  for (const blob of sorted) {
    const v = chain.verify(blob);
    first ??= { epoch: v.startEpoch, rootHash: blob.name.previousHash.slice() };
  }
  return { first: first!, last: chain.head!, naming: chain.naming!, verified: chain.verified };
}
