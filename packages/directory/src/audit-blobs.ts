/**
 * Audit blobs from a directory (spec 16): each epoch step's append-only proof in upstream's
 * published form, a `SingleAppendOnlyProof` named `<epoch>/<previous root>/<current root>`.
 *
 * The directory keeps no past root hashes, so each step's roots come from its proof, which is
 * spec 11.5 run backwards: the unchanged subtree roots rebuild the root at the step's start,
 * and the same subtrees plus the inserted leaves, bound to the step's end epoch, rebuild the
 * root at its end. Consecutive steps must then agree (one's end root is the next one's start
 * root), the first step from epoch 0 starts at the empty tree, and a range ending at the
 * latest epoch ends at the directory's current root; a directory whose proofs break any of
 * this has a corrupt tree (DIRECTORY_TREE), and nothing is exported for it.
 *
 * {@link AuditBlobCatalog} serves the same blobs on demand, as the HTTP listing does: blob
 * names in S3 key order for any prefix and start-after, computed as they are asked for and
 * remembered (a name never changes; the proof bytes may, since a step's proof is read at the
 * latest epoch and later insertions can split an unchanged subtree into smaller ones; every
 * such proof verifies against the same two roots).
 */

import {
  AkdError,
  appendOnlyStepRoots,
  auditBlobOfStep,
  bytesEqual,
  epochsInKeyOrder,
  formatAuditBlobName,
  stepStartOfBlob,
  toHex,
  type AppendOnlyProof,
  type AuditBlob,
  type AuditBlobNaming,
  type Configuration,
  type Digest,
  type EpochHash,
  type SingleAppendOnlyProof,
} from '@akd-ts/core';

/** What blobs are made from: a `ReadOnlyDirectory`, or anything serving the same proofs. */
export interface AuditBlobDirectory {
  readonly config: Configuration;
  /** Append-only proof of the steps `start -> ... -> end` (spec 12.6). */
  audit(start: bigint, end: bigint): Promise<AppendOnlyProof>;
  /** The latest epoch and its root (spec 12.7). */
  getEpochHash(): Promise<EpochHash>;
}

/** A blob with its key (the name string) and the step it proves. */
export interface ExportedAuditBlob extends AuditBlob {
  /** `formatAuditBlobName(name)`: where the blob is stored and listed. */
  key: string;
  /** The step proven is `startEpoch -> startEpoch + 1`. */
  startEpoch: bigint;
}

export interface ExportAuditBlobsOptions {
  /** Which epoch names a blob (default `end`, as WhatsApp's published blobs; see core's blob.ts). */
  naming?: AuditBlobNaming;
  /** Steps per `audit` call (default 1: one step's proof in memory at a time). */
  stepsPerProof?: number;
}

/**
 * The roots before and after one step, derived from its proof (spec 11.5 backwards).
 *
 * @throws AkdError `AUDIT_MALFORMED_PROOF` for duplicate or nested labels in the proof.
 * @example stepRoots(config, proof.proofs[0], 2n) // { previousHash: root at 1, currentHash: root at 2 }
 */
export function stepRoots(
  config: Configuration,
  proof: SingleAppendOnlyProof,
  endEpoch: bigint,
): { previousHash: Digest; currentHash: Digest } {
  const { startHash, endHash } = appendOnlyStepRoots(config, proof, endEpoch);
  return { previousHash: startHash, currentHash: endHash };
}

function corrupt(message: string): AkdError {
  return new AkdError('DIRECTORY_TREE', message);
}

/** The blob of one step whose proof is `proof`, with its roots derived and checked. */
function blobOfStep(
  config: Configuration,
  proof: SingleAppendOnlyProof,
  startEpoch: bigint,
  naming: AuditBlobNaming,
): ExportedAuditBlob {
  const { previousHash, currentHash } = stepRoots(config, proof, startEpoch + 1n);
  if (startEpoch === 0n) {
    const empty = config.computeRootHashFromVal(config.emptyRootValue);
    if (!bytesEqual(previousHash, empty)) {
      throw corrupt(
        `the step 0 -> 1 does not start at the empty tree (root ${toHex(previousHash)})`,
      );
    }
  }
  const blob = auditBlobOfStep(proof, startEpoch, previousHash, currentHash, naming);
  return { ...blob, key: formatAuditBlobName(blob.name), startEpoch };
}

/**
 * The blobs of the steps `from -> from + 1`, ..., `to - 1 -> to`, in order, each checked to
 * continue the one before; the last is checked against the directory's root when `to` is
 * the latest epoch.
 *
 * @throws AkdError `DIRECTORY_INVALID_EPOCH` unless `from < to <= latest`; `DIRECTORY_TREE`
 * when the directory's proofs do not chain.
 * @example
 * ```ts
 * for await (const blob of exportAuditBlobs(reader, 0n, 50n)) await save(blob.key, blob.data);
 * ```
 */
export async function* exportAuditBlobs(
  directory: AuditBlobDirectory,
  from: bigint,
  to: bigint,
  options: ExportAuditBlobsOptions = {},
): AsyncGenerator<ExportedAuditBlob> {
  const naming = options.naming ?? 'end';
  const batch = BigInt(Math.max(1, Math.floor(options.stepsPerProof ?? 1)));
  if (naming !== 'end' && naming !== 'start') {
    throw new RangeError(`naming must be start or end, got ${String(naming)}`);
  }
  if (from < 0n || from >= to) {
    throw new AkdError(
      'DIRECTORY_INVALID_EPOCH',
      `an export needs from < to, got ${from} and ${to}`,
    );
  }
  const latest = await directory.getEpochHash();
  let previous: ExportedAuditBlob | undefined;
  for (let start = from; start < to; start += batch) {
    const end = start + batch < to ? start + batch : to;
    const proof = await directory.audit(start, end); // checks end <= latest
    for (let i = 0; i < proof.proofs.length; i++) {
      const blob = blobOfStep(directory.config, proof.proofs[i]!, proof.epochs[i]!, naming);
      if (
        previous !== undefined &&
        !bytesEqual(previous.name.currentHash, blob.name.previousHash)
      ) {
        throw corrupt(
          `the proofs disagree on the root at epoch ${blob.startEpoch}: ${toHex(previous.name.currentHash)} after the step before, ${toHex(blob.name.previousHash)} before the step after`,
        );
      }
      previous = blob;
      yield blob;
    }
  }
  if (to === latest.epoch && !bytesEqual(previous!.name.currentHash, latest.hash)) {
    throw corrupt(
      `the last step ends at root ${toHex(previous!.name.currentHash)}, not at the directory's root ${toHex(latest.hash)} of epoch ${latest.epoch}`,
    );
  }
}

/** One entry of a listing: a blob's key and its size when listed. */
export interface AuditBlobListingEntry {
  key: string;
  size: number;
}

/** A page of {@link AuditBlobCatalog.list}. */
export interface AuditBlobListingPage {
  contents: AuditBlobListingEntry[];
  /** More keys follow the last one listed. */
  isTruncated: boolean;
}

export interface AuditBlobCatalogOptions {
  naming?: AuditBlobNaming;
  /** Names remembered (default 1,000,000; about 200 bytes each). */
  maxNames?: number;
  /** Blobs (their bytes) remembered (default 16). */
  maxBlobs?: number;
}

/** A Map used as a least-recently-used cache of bounded size. */
class Lru<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }
  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

/**
 * Blobs on demand, for a server: by name epoch, and as listing pages in S3 key order.
 *
 * @example
 * ```ts
 * const catalog = new AuditBlobCatalog(reader);
 * const page = await catalog.list({ prefix: '42/', maxKeys: 1000 }); // the blob of epoch 42
 * const blob = await catalog.blobAt(42n);
 * ```
 */
export class AuditBlobCatalog {
  readonly naming: AuditBlobNaming;
  private readonly names: Lru<bigint, AuditBlobListingEntry>;
  private readonly blobs: Lru<bigint, ExportedAuditBlob>;
  private readonly pending = new Map<bigint, Promise<ExportedAuditBlob>>();

  constructor(
    private readonly directory: AuditBlobDirectory,
    options: AuditBlobCatalogOptions = {},
  ) {
    this.naming = options.naming ?? 'end';
    if (this.naming !== 'end' && this.naming !== 'start') {
      throw new RangeError(`naming must be start or end, got ${String(this.naming)}`);
    }
    this.names = new Lru(options.maxNames ?? 1_000_000);
    this.blobs = new Lru(options.maxBlobs ?? 16);
  }

  /** The name epochs that have a blob now: `[first, last]`, or undefined before epoch 1. */
  async range(): Promise<{ first: bigint; last: bigint; latest: EpochHash } | undefined> {
    const latest = await this.directory.getEpochHash();
    if (latest.epoch === 0n) return undefined;
    return this.naming === 'end'
      ? { first: 1n, last: latest.epoch, latest }
      : { first: 0n, last: latest.epoch - 1n, latest };
  }

  /**
   * The blob named with `epoch`, or undefined when no step has that name yet.
   * @throws AkdError `DIRECTORY_TREE` when the step's proof does not rebuild the directory's
   * current root (for the latest step).
   */
  async blobAt(epoch: bigint): Promise<ExportedAuditBlob | undefined> {
    const cached = this.blobs.get(epoch);
    if (cached !== undefined) return cached;
    const range = await this.range();
    if (range === undefined || epoch < range.first || epoch > range.last) return undefined;
    return this.fetch(epoch, range.latest);
  }

  /** Computes the blob of a name epoch in range, once however many ask at the same time. */
  private fetch(epoch: bigint, latest: EpochHash): Promise<ExportedAuditBlob> {
    let p = this.pending.get(epoch);
    if (p === undefined) {
      p = this.compute(epoch, latest).finally(() => this.pending.delete(epoch));
      this.pending.set(epoch, p);
    }
    return p;
  }

  private async compute(epoch: bigint, latest: EpochHash): Promise<ExportedAuditBlob> {
    const start = stepStartOfBlob(epoch, this.naming)!;
    const proof = await this.directory.audit(start, start + 1n);
    const blob = blobOfStep(this.directory.config, proof.proofs[0]!, start, this.naming);
    if (start + 1n === latest.epoch && !bytesEqual(blob.name.currentHash, latest.hash)) {
      throw corrupt(
        `the step ${start} -> ${latest.epoch} ends at root ${toHex(blob.name.currentHash)}, not at the directory's root ${toHex(latest.hash)}`,
      );
    }
    // keep the size first listed, so that pages agree with each other
    if (this.names.get(epoch) === undefined) {
      this.names.set(epoch, { key: blob.key, size: blob.data.length });
    }
    this.blobs.set(epoch, blob);
    return blob;
  }

  /** The key and size of the blob named with `epoch`, an epoch in range. */
  private async entryAt(epoch: bigint, latest: EpochHash): Promise<AuditBlobListingEntry> {
    const known = this.names.get(epoch);
    if (known !== undefined) return known;
    const blob = await this.fetch(epoch, latest);
    return { key: blob.key, size: blob.data.length };
  }

  /**
   * A page of the listing in S3 key order: keys starting with `prefix` and sorting after
   * `startAfter`, at most `maxKeys` of them.
   *
   * @example (await catalog.list({ maxKeys: 2 })).contents.map((c) => c.key) // ['1/...', '10/...']
   */
  async list(query: {
    prefix?: string;
    startAfter?: string;
    maxKeys: number;
  }): Promise<AuditBlobListingPage> {
    const range = await this.range();
    const contents: AuditBlobListingEntry[] = [];
    if (range === undefined) return { contents, isTruncated: false };
    const prefix = query.prefix ?? '';
    const after = query.startAfter ?? '';
    for (const { epoch, exact } of epochsInKeyOrder(range.first, range.last, {
      prefix,
      startAfter: after,
    })) {
      if (contents.length === query.maxKeys && exact) return { contents, isTruncated: true };
      const entry = await this.entryAt(epoch, range.latest);
      if (!exact && !(entry.key.startsWith(prefix) && entry.key > after)) continue;
      if (contents.length === query.maxKeys) return { contents, isTruncated: true };
      contents.push(entry);
    }
    return { contents, isTruncated: false };
  }
}
