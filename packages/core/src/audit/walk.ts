/**
 * Walking a source of audit blobs (a folder, an HTTP listing, anything with keys) epoch by
 * epoch through an {@link AuditChain}. The source is an interface of four async calls, so
 * this stays free of any platform: the CLI implements it over the file system and over
 * `fetch`, a browser could implement it over `fetch` alone.
 *
 * The walk asks for the blob of the next epoch by name epoch, as WhatsApp's kt auditor does
 * with `prefix=<epoch>/` (spec 16), so it never holds a whole listing in memory and resumes at
 * any epoch. When the next epoch has no blob it asks whether any later epoch has one: if so
 * an epoch is missing (AUDIT_EPOCH_GAP), otherwise the walk has reached the end of the log.
 */

import { AkdError } from '../errors.js';
import type { AuditBlobName } from './blob-name.js';
import { parseAuditBlobName } from './blob-name.js';
import type { AuditBlob, VerifiedAuditBlob, VerifyAuditBlobOptions } from './blob.js';
import type { AuditChain } from './chain.js';

/** Where blobs come from. Keys are blob names as the source spells them (spec 16). */
export interface AuditBlobSource {
  /** Keys of the blobs whose name carries `epoch` (normally one; none when there is none). */
  keysAt(epoch: bigint): Promise<string[]>;
  /** The bytes of the blob stored under `key`. */
  read(key: string): Promise<Uint8Array>;
  /** The lowest name epoch of any blob, or undefined when the source is empty. */
  firstEpoch(): Promise<bigint | undefined>;
  /** The lowest name epoch above `epoch` of any blob, or undefined when there is none. */
  nextEpochAfter(epoch: bigint): Promise<bigint | undefined>;
}

export interface WalkOptions {
  /** Stops the walk between two blobs. */
  signal?: AbortSignal;
  /** Verify at most this many blobs. */
  limit?: number;
  /**
   * Fetch up to this many blobs ahead while one is being verified (default 0), once the
   * naming is known; worth it over a network.
   */
  prefetch?: number;
  /** Called after each verified blob, with the key it was read from. */
  onVerified?: (verified: VerifiedAuditBlob, key: string) => void | Promise<void>;
  /**
   * Verifies blobs elsewhere (worker threads, say): called with a blob and the options its
   * chain gives it ({@link AuditChain.verifyOptions}); the results are accepted in epoch
   * order, so the chain's checks, its errors and where it stops are those of a walk without.
   */
  verifier?: (blob: AuditBlob, options: VerifyAuditBlobOptions) => Promise<VerifiedAuditBlob>;
  /**
   * With a verifier, and once the naming is settled: blobs fetched and verified at once
   * (default 1). The first failure in epoch order ends the walk; later blobs' results are
   * dropped.
   */
  concurrency?: number;
}

/** Why a walk ended (short of an error, which it throws). */
export type WalkEnd = 'end' | 'empty' | 'aborted' | 'limit';

export interface WalkResult {
  /** Blobs verified by this walk. */
  verified: number;
  ended: WalkEnd;
}

interface Fetched {
  key: string;
  name: AuditBlobName;
}

/** The one blob named with `epoch`, if any (two are a fork: no history has two steps there). */
async function blobAt(source: AuditBlobSource, epoch: bigint): Promise<Fetched | undefined> {
  const keys = await source.keysAt(epoch);
  if (keys.length === 0) return undefined;
  const names = keys.map((key) => ({ key, name: parseAuditBlobName(key) }));
  const stray = names.find((n) => n.name.epoch !== epoch);
  if (stray !== undefined) {
    throw new AkdError(
      'AUDIT_BLOB_NAME',
      `the source lists ${JSON.stringify(stray.key)} as a blob of epoch ${epoch}`,
    );
  }
  if (names.length > 1) {
    throw new AkdError(
      'AUDIT_CHAIN_BROKEN',
      `the source holds ${names.length} blobs named with epoch ${epoch} (${keys.join(', ')}): two histories diverge there`,
    );
  }
  return names[0];
}

/**
 * Verifies blobs from `source` into `chain`, from its head onwards (or from the source's first
 * blob when the chain has no head), until the source has no next blob.
 *
 * @throws AkdError from the chain (the first blob that fails), `AUDIT_EPOCH_GAP` when the
 * next epoch has no blob but a later one has, `AUDIT_BLOB_NAME` for a key that is not a blob
 * name, `AUDIT_CHAIN_BROKEN` for two blobs with one epoch; errors of the source pass through.
 * @example
 * ```ts
 * const chain = new AuditChain(config, { anchor });
 * const { verified } = await walkAuditBlobs(chain, source, { onVerified: (v) => console.log(v.endEpoch) });
 * ```
 */
export async function walkAuditBlobs(
  chain: AuditChain,
  source: AuditBlobSource,
  options: WalkOptions = {},
): Promise<WalkResult> {
  const limit = options.limit ?? Infinity;
  const prefetch = Math.max(0, options.prefetch ?? 0);
  const ahead = new Map<bigint, Promise<{ found: Fetched; data: Uint8Array } | undefined>>();
  const verifier = options.verifier;
  const concurrency = verifier === undefined ? 1 : Math.max(1, options.concurrency ?? 1);
  /** Blobs dispatched to the verifier ahead of their turn: epoch -> the key read, and the outcome. */
  const verifying = new Map<
    bigint,
    Promise<{ key: string; outcome: VerifiedAuditBlob | AkdError } | undefined>
  >();
  let verified = 0;

  const outcomeOf = (blob: AuditBlob) =>
    verifier!(blob, chain.verifyOptions(blob.name)).catch((e: unknown) => {
      if (e instanceof AkdError) return e;
      throw e;
    });
  // With the naming settled, the next blobs' names are known: each is fetched and verified
  // while the ones before it are, and accepted when its turn comes.
  const dispatchAhead = (base: bigint) => {
    if (concurrency < 2 || chain.naming === undefined) return;
    for (let k = 1n; k < BigInt(concurrency); k++) {
      const epoch = base + k;
      if (verifying.has(epoch)) continue;
      if (!ahead.has(epoch)) ahead.set(epoch, fetchAt(epoch));
      const outcome = ahead
        .get(epoch)!
        .then(async (f) =>
          f === undefined
            ? undefined
            : { key: f.found.key, outcome: await outcomeOf({ name: f.found.name, data: f.data }) },
        );
      outcome.catch(() => {}); // failures surface when (if) their epoch's turn comes
      verifying.set(epoch, outcome);
    }
  };

  // A blob and its bytes, taken from the read-ahead when there; an absent blob is looked up
  // again rather than trusted from the read-ahead, which may predate its publication.
  const fetchAt = (epoch: bigint) => {
    const p = blobAt(source, epoch).then(async (found) =>
      found === undefined ? undefined : { found, data: await source.read(found.key) },
    );
    p.catch(() => {}); // read-ahead failures surface when (if) their epoch is reached
    return p;
  };
  const take = async (epoch: bigint) => {
    const queued = ahead.get(epoch);
    ahead.delete(epoch);
    const early = await queued?.catch(() => undefined); // a failed read-ahead is retried
    return early ?? (await fetchAt(epoch));
  };

  for (;;) {
    if (options.signal?.aborted === true) return { verified, ended: 'aborted' };
    if (verified >= limit) return { verified, ended: 'limit' };
    let candidates = chain.nextBlobEpochs();
    if (candidates === undefined) {
      const first = await source.firstEpoch();
      if (first === undefined) return { verified, ended: 'empty' };
      candidates = [first];
    }

    let next: { found: Fetched; data: Uint8Array } | undefined;
    if (candidates.length === 1) {
      next = await take(candidates[0]!);
    } else {
      // The naming is still open: the step from the head is the blob that starts at the head's
      // root (the likelier reading first); with none, the first found fails in the chain.
      const found: Fetched[] = [];
      for (const epoch of candidates) {
        const f = await blobAt(source, epoch);
        if (f !== undefined) found.push(f);
      }
      const pick = found.find((f) => chain.startsAtHead(f.name)) ?? found[0];
      next = pick && { found: pick, data: await source.read(pick.key) };
    }

    if (next === undefined) {
      const last = candidates.reduce((a, b) => (a > b ? a : b));
      const later = await source.nextEpochAfter(last);
      if (later !== undefined) {
        throw new AkdError(
          'AUDIT_EPOCH_GAP',
          `no blob for epoch ${candidates.length === 1 ? last : candidates.join(' or ')}, but the source holds one for epoch ${later}: the epochs in between are missing`,
        );
      }
      return { verified, ended: 'end' };
    }

    const blob = { name: next.found.name, data: next.data };
    const early = await verifying.get(blob.name.epoch)?.catch(() => undefined);
    verifying.delete(blob.name.epoch);
    let result: VerifiedAuditBlob;
    if (verifier === undefined) result = chain.verify(blob);
    else {
      // an outcome from ahead counts only for the blob taken now (the same read-ahead)
      const outcome = early?.key === next.found.key ? early.outcome : await outcomeOf(blob);
      result = chain.accept(blob, outcome);
    }
    verified++;
    if (prefetch > 0 && chain.naming !== undefined) {
      const base = next.found.name.epoch;
      for (let k = 1n; k <= BigInt(prefetch); k++) {
        if (!ahead.has(base + k)) ahead.set(base + k, fetchAt(base + k));
      }
    }
    dispatchAhead(blob.name.epoch);
    await options.onVerified?.(result, next.found.key);
  }
}
