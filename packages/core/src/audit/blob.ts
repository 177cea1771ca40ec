/**
 * Audit blobs (spec 16): one epoch step's append-only proof, published as the protobuf bytes
 * of a `SingleAppendOnlyProof` under the name `<epoch>/<previous hash>/<current hash>`.
 *
 * Which epoch the name carries (spec 21, open question 1) is settled by the hashes, not by
 * convention. Upstream's `generate_audit_blobs` names a step by its START epoch; WhatsApp's kt
 * auditor reads the name as the step's END epoch (it verifies with `epochs = [name - 1]`).
 * Verification hashes every inserted leaf with the step's end epoch
 * (`H(commitment || be64(end))`, spec 3.1, 11.5), so the two readings check the current hash
 * against two different trees: a blob that inserts anything verifies under exactly one
 * reading (two would need a hash collision). So we do not guess: we verify under the reading
 * asked for (or the likely one), and when that fails only at the end-root check we try the
 * other; if the other verifies, the blob's naming is known for certain. A blob that inserts
 * nothing rebuilds the same root under both, and is "ambiguous": its naming comes from the
 * chain it belongs to (chain.ts). WhatsApp's published blobs verify under the end reading
 * (the kt auditor, which is what runs against production, would reject every start-named
 * blob), which is why `end` is the default everywhere here.
 */

import { toHex } from '../bytes.js';
import type { Configuration } from '../config/configuration.js';
import { AkdError, isAkdError } from '../errors.js';
import { decodeSingleAppendOnlyProof, encodeSingleAppendOnlyProof } from '../proto/codec.js';
import type { AppendOnlyProof, Digest, SingleAppendOnlyProof } from '../types.js';
import { readSingleAppendOnlyProof } from '../proto/append-only-step.js';
import { StepRebuild, packStep, verifyStep } from '../verify/append-only-step.js';
import { formatAuditBlobName, type AuditBlobName } from './blob-name.js';

/**
 * Which epoch a blob's name carries: the step's `start` epoch (upstream
 * `generate_audit_blobs`) or its `end` epoch (WhatsApp's published blobs, read so by the kt
 * auditor).
 */
export type AuditBlobNaming = 'start' | 'end';

/** Both namings, the default (`end`) first. */
export const AUDIT_BLOB_NAMINGS: readonly AuditBlobNaming[] = ['end', 'start'];

/** A published blob: its name and the protobuf bytes of its `SingleAppendOnlyProof`. */
export interface AuditBlob {
  name: AuditBlobName;
  data: Uint8Array;
}

/** What one verified blob proved: the tree grew append-only from `startEpoch` to `endEpoch`. */
export interface VerifiedAuditBlob {
  name: AuditBlobName;
  /** The reading under which the blob verified. */
  naming: AuditBlobNaming;
  /**
   * True when the blob inserts nothing, so that it verifies under both readings and `naming`
   * is only the one assumed (honest directories never publish such a step).
   */
  ambiguous: boolean;
  /** The epoch of `name.previousHash`. */
  startEpoch: bigint;
  /** The epoch of `name.currentHash` (`startEpoch + 1`). */
  endEpoch: bigint;
  /** Leaves the step inserted. */
  inserted: number;
  /** Unchanged subtree roots the proof carries. */
  unchanged: number;
  /** Size of the blob's data. */
  bytes: number;
}

const U64_MAX = (1n << 64n) - 1n;

/** The other naming. */
export function otherNaming(naming: AuditBlobNaming): AuditBlobNaming {
  return naming === 'end' ? 'start' : 'end';
}

/**
 * The epoch a blob of the step `startEpoch -> startEpoch + 1` is named by.
 *
 * @example blobEpochOfStep(41n, 'end') // 42n
 */
export function blobEpochOfStep(startEpoch: bigint, naming: AuditBlobNaming): bigint {
  return naming === 'end' ? startEpoch + 1n : startEpoch;
}

/**
 * The start epoch of the step a blob named `epoch` proves under `naming`, or undefined when
 * no step can have that name (an end-named epoch 0, a start-named 2^64 - 1).
 *
 * @example stepStartOfBlob(42n, 'end') // 41n
 */
export function stepStartOfBlob(epoch: bigint, naming: AuditBlobNaming): bigint | undefined {
  if (naming === 'end') return epoch === 0n ? undefined : epoch - 1n;
  return epoch === U64_MAX ? undefined : epoch;
}

/**
 * The blob of one step (spec 16 `AuditBlob`): the proof's bytes under the name of `naming`.
 *
 * @example
 * ```ts
 * const blob = auditBlobOfStep(step, 41n, rootAt41, rootAt42); // named '42/<root41>/<root42>'
 * ```
 */
export function auditBlobOfStep(
  proof: SingleAppendOnlyProof,
  startEpoch: bigint,
  previousHash: Digest,
  currentHash: Digest,
  naming: AuditBlobNaming = 'end',
): AuditBlob {
  const name = { epoch: blobEpochOfStep(startEpoch, naming), previousHash, currentHash };
  formatAuditBlobName(name); // checks the epoch range and hash lengths
  return { name, data: encodeSingleAppendOnlyProof(proof) };
}

/**
 * Upstream's `generate_audit_blobs` (spec 16): one blob per step of `proof`, where
 * `hashes[i]` is the root at `proof.epochs[i]`; with the naming of your choice (upstream's
 * own is `start`; the default here is `end`, the one WhatsApp's blobs use).
 *
 * @throws AkdError `AUDIT_LENGTH_MISMATCH` unless there is one more hash than steps, and as
 * many epochs as steps (spec 11.5).
 * @example generateAuditBlobs([root1, root2], await directory.audit(1n, 2n)) // [blob '2/...']
 */
export function generateAuditBlobs(
  hashes: Digest[],
  proof: AppendOnlyProof,
  naming: AuditBlobNaming = 'end',
): AuditBlob[] {
  if (proof.epochs.length !== proof.proofs.length || hashes.length !== proof.proofs.length + 1) {
    throw new AkdError(
      'AUDIT_LENGTH_MISMATCH',
      `${hashes.length} hashes, ${proof.epochs.length} epochs and ${proof.proofs.length} proofs: expected one more hash than proofs, and one epoch per proof`,
    );
  }
  return proof.proofs.map((step, i) =>
    auditBlobOfStep(step, proof.epochs[i]!, hashes[i]!, hashes[i + 1]!, naming),
  );
}

/**
 * Upstream's `AuditBlob::decode` (spec 16): the name's parts and the decoded proof.
 *
 * @throws AkdError `DECODE_*` when the data is not a `SingleAppendOnlyProof`; the message
 * names the blob.
 * @example const { proof } = decodeAuditBlob(blob);
 */
export function decodeAuditBlob(blob: AuditBlob): AuditBlobName & { proof: SingleAppendOnlyProof } {
  try {
    return { ...blob.name, proof: decodeSingleAppendOnlyProof(blob.data) };
  } catch (e) {
    throw inBlob(blob.name, e);
  }
}

/** `e` with the blob's name in front of its message (AkdErrors keep their code). */
export function inBlob(name: AuditBlobName, e: unknown): unknown {
  if (!isAkdError(e)) return e;
  return new AkdError(e.code, `blob ${shortName(name)}: ${e.message}`, {
    field: e.field,
    cause: e,
  });
}

/** `42/0a1b2c3d.../4e5f6a7b...`: a blob name short enough for a message. */
export function shortName(name: AuditBlobName): string {
  const hex = (h: Digest) => `${toHex(h.subarray(0, 4))}...`;
  return `${name.epoch}/${hex(name.previousHash)}/${hex(name.currentHash)}`;
}

export interface VerifyAuditBlobOptions {
  /**
   * The naming to verify under: `end` or `start` pins it (a blob that verifies only under the
   * other fails with `AUDIT_BLOB_EPOCH`), `auto` (the default) accepts whichever verifies.
   */
  naming?: AuditBlobNaming | 'auto';
  /** With `auto`, the reading tried first and assumed for an ambiguous blob (default `end`). */
  prefer?: AuditBlobNaming;
}

/**
 * Verifies the step under `naming`; the error, or undefined when it verifies. The labels'
 * checks and the start root are the same under both namings, so the rebuild keeps them.
 */
function attempt(
  name: AuditBlobName,
  rebuild: StepRebuild,
  naming: AuditBlobNaming,
): AkdError | undefined {
  const start = stepStartOfBlob(name.epoch, naming);
  if (start === undefined) {
    return new AkdError(
      'AUDIT_BLOB_EPOCH',
      naming === 'end'
        ? 'named by its end epoch it would be a step ending at epoch 0, which no step does'
        : 'named by its start epoch it would be a step ending beyond 2^64 - 1',
    );
  }
  try {
    verifyStep(rebuild, name.previousHash, name.currentHash, start + 1n);
    return undefined;
  } catch (e) {
    if (isAkdError(e)) return e;
    /* c8 ignore next */
    throw e; // a bug, not a verdict on the blob
  }
}

/**
 * Verifies one blob (spec 11.5 on the decoded proof, spec 16): its proof turns the tree with
 * root `previousHash` into the tree with root `currentHash`, inserting every new leaf at the
 * step's end epoch, which the name's epoch and the naming fix.
 *
 * @throws AkdError `DECODE_*` (the data is not a proof), `AUDIT_MALFORMED_PROOF`,
 * `AUDIT_START_HASH_MISMATCH`, `AUDIT_END_HASH_MISMATCH`, or `AUDIT_BLOB_EPOCH` (the blob
 * verifies only under the naming not asked for, or its epoch cannot exist under the naming
 * asked for); messages begin with the blob's name.
 * @example
 * ```ts
 * const v = verifyAuditBlob(new WhatsAppV1Configuration(), blob);
 * v.naming; // 'end' for WhatsApp's blobs
 * v.endEpoch; // the epoch whose root is blob.name.currentHash
 * ```
 */
export function verifyAuditBlob(
  config: Configuration,
  blob: AuditBlob,
  options: VerifyAuditBlobOptions = {},
): VerifiedAuditBlob {
  const { name } = blob;
  // the usual encoding is read straight into flat arrays; any other takes the generic decoder
  const step = readSingleAppendOnlyProof(blob.data) ?? packStep(decodeAuditBlob(blob).proof);
  const rebuild = new StepRebuild(config, step);
  const asked = options.naming ?? 'auto';
  const first = asked === 'auto' ? (options.prefer ?? 'end') : asked;
  const second = otherNaming(first);
  const result = (naming: AuditBlobNaming, ambiguous: boolean): VerifiedAuditBlob => {
    const startEpoch = stepStartOfBlob(name.epoch, naming)!;
    return {
      name,
      naming,
      ambiguous,
      startEpoch,
      endEpoch: startEpoch + 1n,
      inserted: rebuild.inserted,
      unchanged: rebuild.unchanged,
      bytes: blob.data.length,
    };
  };

  const failed = attempt(name, rebuild, first);
  if (failed === undefined) return result(first, rebuild.inserted === 0);
  // Only the end-root check and the epoch's range depend on the reading; any other failure
  // (a malformed proof, a wrong previous root) is the same under both.
  if (failed.code !== 'AUDIT_END_HASH_MISMATCH' && failed.code !== 'AUDIT_BLOB_EPOCH') {
    throw inBlob(name, failed);
  }
  const other = attempt(name, rebuild, second);
  if (other === undefined) {
    if (asked === 'auto') return result(second, false);
    const start = stepStartOfBlob(name.epoch, second)!;
    throw inBlob(
      name,
      new AkdError(
        'AUDIT_BLOB_EPOCH',
        `the blob is named by its ${second} epoch: it verifies as the step ${start} -> ${start + 1n}, and not as ${describeStep(name.epoch, first)} under the ${first}-epoch naming asked for`,
      ),
    );
  }
  // Neither reading verifies: report the one asked for, unless it could not even apply.
  const reported = failed.code === 'AUDIT_BLOB_EPOCH' ? other : failed;
  const also = asked === 'auto' ? ' (under either naming)' : '';
  throw inBlob(
    name,
    new AkdError(reported.code, `${reported.message}${also}`, { cause: reported }),
  );
}

function describeStep(epoch: bigint, naming: AuditBlobNaming): string {
  const start = stepStartOfBlob(epoch, naming);
  return start === undefined ? 'a step' : `the step ${start} -> ${start + 1n}`;
}
