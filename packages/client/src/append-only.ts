/**
 * Proving that a new head extends the last one: the server's append-only proof (spec 10.5,
 * 11.5) over the epochs between them, fetched from `GET /v1/audit` in ranges the server
 * accepts. Each step's proof yields the roots before and after it (core's
 * appendOnlyStepRoots, which checks the step's labels); the steps must chain from the old
 * root to the new one, epoch after epoch. The roots passed on the way are returned, so that
 * witness signatures of any epoch in between can be checked against them.
 */

import {
  AkdError,
  appendOnlyStepRoots,
  bytesEqual,
  decodeAppendOnlyProof,
  isAkdError,
  toHex,
  type AppendOnlyProof,
  type Configuration,
} from '@akd-ts/core';
import { getProtobuf, type FetchLike } from './http.js';
import type { Head } from './state.js';

/** A range's proof as the server sent it, kept for evidence. */
export interface AppendOnlyRange {
  from: bigint;
  to: bigint;
  /** The bare protobuf `AppendOnlyProof`. */
  proof: Uint8Array;
}

/** What an append-only check found. */
export interface AppendOnlyResult {
  /** Root of every epoch from the old head's to the new head's (both included). */
  roots: Map<bigint, Uint8Array>;
  ranges: AppendOnlyRange[];
}

/** An append-only proof that was served but does not verify, with what was served. */
export class AppendOnlyFailure extends AkdError {
  readonly ranges: AppendOnlyRange[];
  constructor(cause: AkdError, ranges: AppendOnlyRange[]) {
    super(cause.code, cause.message, { cause });
    this.ranges = ranges;
  }
}

/**
 * Verifies `proof` as the steps from `start` (epoch, root) to epoch `to`, adding each step's
 * end root to `roots`.
 * @throws AkdError `AUDIT_*` when the steps do not chain from the start root, epoch by epoch.
 */
export function verifyRange(
  config: Configuration,
  start: Head,
  to: bigint,
  proof: AppendOnlyProof,
  roots: Map<bigint, Uint8Array>,
): Uint8Array {
  if (proof.epochs.length !== proof.proofs.length || proof.proofs.length === 0) {
    throw new AkdError(
      'AUDIT_LENGTH_MISMATCH',
      `${proof.epochs.length} epochs for ${proof.proofs.length} steps`,
    );
  }
  let root = start.rootHash;
  let epoch = start.epoch;
  for (let i = 0; i < proof.proofs.length; i++) {
    if (proof.epochs[i] !== epoch) {
      throw new AkdError(
        'AUDIT_EPOCH_GAP',
        `step ${i} starts at epoch ${proof.epochs[i]}, expected ${epoch}`,
      );
    }
    const step = appendOnlyStepRoots(config, proof.proofs[i]!, epoch + 1n);
    if (!bytesEqual(step.startHash, root)) {
      throw new AkdError(
        'AUDIT_START_HASH_MISMATCH',
        `the step from epoch ${epoch} starts at root ${toHex(step.startHash)}, not the verified ${toHex(root)}`,
      );
    }
    epoch += 1n;
    root = step.endHash;
    roots.set(epoch, root);
  }
  if (epoch !== to) {
    throw new AkdError('AUDIT_EPOCH_GAP', `the proof ends at epoch ${epoch}, expected ${to}`);
  }
  return root;
}

/** Codes with which a server says it cannot serve a range now or at that size. */
const NOT_SERVED = new Set(['CLIENT_RESPONSE', 'HTTP_AUDIT_TOO_LARGE', 'DIRECTORY_LIMIT']);

/**
 * Fetches and verifies the append-only proof from `from` to `to` (epoch and root both), in
 * ranges of at most `maxEpochs` (halved when the server finds a range too large).
 * @throws AppendOnlyFailure when a served proof does not verify or does not end at `to`'s
 * root; the server's own errors (it could not or would not serve) as they come.
 */
export async function proveAppendOnly(
  fetch: FetchLike,
  server: string,
  config: Configuration,
  from: Head,
  to: Head,
  maxEpochs: number,
): Promise<AppendOnlyResult> {
  const roots = new Map<bigint, Uint8Array>([[from.epoch, from.rootHash]]);
  const ranges: AppendOnlyRange[] = [];
  let at: Head = from;
  let span = BigInt(Math.max(1, maxEpochs));
  while (at.epoch < to.epoch) {
    const end = at.epoch + span < to.epoch ? at.epoch + span : to.epoch;
    const url = `${server}/v1/audit?from=${at.epoch}&to=${end}`;
    let bytes: Uint8Array;
    try {
      bytes = await getProtobuf(fetch, url);
    } catch (e) {
      if (isAkdError(e) && NOT_SERVED.has(e.code) && span > 1n) {
        span /= 2n;
        continue;
      }
      throw e;
    }
    ranges.push({ from: at.epoch, to: end, proof: bytes });
    try {
      const root = verifyRange(config, at, end, decodeAppendOnlyProof(bytes), roots);
      at = { epoch: end, rootHash: root };
    } catch (e) {
      if (isAkdError(e)) throw new AppendOnlyFailure(e, ranges);
      throw e;
    }
  }
  if (!bytesEqual(at.rootHash, to.rootHash)) {
    throw new AppendOnlyFailure(
      new AkdError(
        'AUDIT_END_HASH_MISMATCH',
        `the append-only proof ends at root ${toHex(at.rootHash)}, not the served epoch ${to.epoch} root ${toHex(to.rootHash)}`,
      ),
      ranges,
    );
  }
  return { roots, ranges };
}
