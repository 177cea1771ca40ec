/**
 * ReadOnlyDirectory (spec 12.1, 12.3-12.7): serves lookup, history and audit proofs from a
 * store another process publishes to. It never writes, sees only committed epochs, and picks
 * up new ones by polling. `Directory` extends it with publishing.
 */

import { setTimeout as delay } from 'node:timers/promises';
import {
  AkdError,
  NodeLabel,
  bytesEqual,
  isAkdError,
  VrfSecretKey,
  type AkdLabel,
  type AppendOnlyProof,
  type Configuration,
  type EpochHash,
  type HistoryParams,
  type HistoryProof,
  type LookupProof,
  VrfPublicKey,
} from '@akd-ts/core';
import { AZKS_KEY, nodeKey, type AzksRecord, type StorageManager } from '@akd-ts/storage';
import { Azks } from './azks.js';
import type { DirectoryContext } from './context.js';
import { DEFAULT_PARALLELISM, parallelLevels, type ParallelismConfig } from './parallelism.js';
import { buildHistoryProof } from './proofs/history-proof.js';
import { buildLookupProofs } from './proofs/lookup-proof.js';
import { createVrfEngine, type VrfEngine, type VrfOptions } from './vrf/engine.js';
import { StoredVrfProofs, VRF_PROOFS_COMPLETE, VRF_PROOFS_SETTING } from './vrf/stored-proofs.js';
import type { VrfKeyStore } from './vrf/key-store.js';
import { proofsThrough } from './vrf/epoch-proofs.js';
import { checkVrfKey } from './vrf/key-check.js';

export interface DirectoryOptions {
  config: Configuration;
  storage: StorageManager;
  /** The VRF secret key: publishing, lookups and histories need it (they compute VRFs). */
  vrfKeys?: VrfKeyStore;
  /**
   * Instead of `vrfKeys`, for a process that must never hold the secret (a proof server): the
   * directory's 32-byte VRF public key. Lookups and histories then serve the VRF proofs and
   * commitment nonces the writer stored as it published (`VRF_PROOF_MISSING` where the store
   * lacks one: run `akd vrf backfill` on a store written before they were stored);
   * `Directory` (publishing) always needs `vrfKeys`.
   */
  publicKey?: Uint8Array;
  /**
   * Where lookups and histories of a directory opened with `vrfKeys` take their VRF proofs:
   * computed with the key (`'compute'`, the default) or read from the store (`'stored'`, as a
   * directory opened with `publicKey` always does).
   */
  vrfProofs?: 'compute' | 'stored';
  /**
   * Whether a writer's publishes store the VRF proofs of the versions they publish (default
   * true), so that processes without the key can serve them.
   */
  storeVrfProofs?: boolean;
  parallelism?: ParallelismConfig;
  /**
   * Worker threads and backend for VRF work (default: the calling thread, with the native
   * addon when it loads, else core's WebAssembly arithmetic, else the portable noble one).
   */
  vrf?: VrfOptions;
  /** A VRF engine of your own instead (it must hold the same key). */
  vrfEngine?: (config: Configuration, secretKey: Uint8Array) => Promise<VrfEngine> | VrfEngine;
  /** Largest number of keys in one storage read during a preload (default 10,000). */
  maxPreloadBatch?: number;
}

const DEFAULT_MAX_PRELOAD_BATCH = 10_000;
/** Proof attempts while the store keeps moving past the epoch a proof was started at. */
const MAX_EPOCH_RETRIES = 8;

/** The context of a reader without the secret (options.publicKey): stored VRF proofs. */
function publicContext(options: DirectoryOptions, publicKey: Uint8Array): DirectoryContext {
  VrfPublicKey.fromBytes(publicKey); // VRF_INVALID_PUBLIC_KEY for bytes that are not a key
  return {
    config: options.config,
    storage: options.storage,
    azks: new Azks(options.config),
    vrf: new StoredVrfProofs(options.storage.db),
    commitmentKey: new Uint8Array(0),
    storeVrfProofs: false,
    publicKey: publicKey.slice(),
    parallelism: options.parallelism ?? DEFAULT_PARALLELISM,
    maxPreloadBatch: options.maxPreloadBatch ?? DEFAULT_MAX_PRELOAD_BATCH,
  };
}

/**
 * Builds the shared context from options (reads the key once).
 * @throws TypeError unless exactly one of `vrfKeys` and `publicKey` is given
 */
export async function makeContext(options: DirectoryOptions): Promise<DirectoryContext> {
  if ((options.vrfKeys === undefined) === (options.publicKey === undefined)) {
    throw new TypeError('give a directory either vrfKeys or (to read public data only) publicKey');
  }
  if (options.vrfKeys === undefined) return publicContext(options, options.publicKey!);
  const secret = await options.vrfKeys.retrieve();
  const key = VrfSecretKey.fromBytes(secret);
  if (options.vrfProofs === 'stored') {
    secret.fill(0);
    return publicContext(options, key.publicKeyBytes);
  }
  const vrf = options.vrfEngine
    ? await options.vrfEngine(options.config, secret)
    : createVrfEngine(options.config, secret, options.vrf);
  const ctx: DirectoryContext = {
    config: options.config,
    storage: options.storage,
    azks: new Azks(options.config),
    vrf,
    commitmentKey: options.config.commitmentKey(secret),
    storeVrfProofs: options.storeVrfProofs ?? true,
    publicKey: key.publicKeyBytes,
    parallelism: options.parallelism ?? DEFAULT_PARALLELISM,
    maxPreloadBatch: options.maxPreloadBatch ?? DEFAULT_MAX_PRELOAD_BATCH,
  };
  secret.fill(0);
  return ctx;
}

/**
 * Proofs from a directory's store, without publishing.
 *
 * @example
 * ```ts
 * const reader = await ReadOnlyDirectory.open({ config, storage, vrfKeys });
 * const { proof, epochHash } = await reader.lookup(utf8('alice'));
 * ```
 */
export class ReadOnlyDirectory {
  /**
   * Where this reader serves stored VRF proofs: the latest epoch whose proofs the writer has
   * stored (epoch-proofs.ts), undefined for a store that keeps no such mark, null until read.
   */
  private proofsMark: bigint | undefined | null = null;

  protected constructor(protected readonly ctx: DirectoryContext) {}

  /**
   * Opens a directory whose store already holds an AZKS.
   * @throws AkdError `DIRECTORY_READ_ONLY` when the store has no AZKS (or cannot be read);
   * `VRF_INVALID_SECRET_KEY` or `VRF_INVALID_PUBLIC_KEY` when the key given is not the
   * directory's (vrf/key-check.ts).
   */
  static async open(options: DirectoryOptions): Promise<ReadOnlyDirectory> {
    const ctx = await makeContext(options);
    try {
      await ctx.azks.read(ctx.storage);
    } catch (e) {
      await ctx.vrf.close();
      throw new AkdError(
        'DIRECTORY_READ_ONLY',
        `cannot open a read-only directory without an AZKS: ${e instanceof Error ? e.message : String(e)}`,
        { cause: e },
      );
    }
    try {
      await checkVrfKey(ctx, options.vrfKeys === undefined ? 'public' : 'secret', false);
    } catch (e) {
      await ctx.vrf.close();
      throw e;
    }
    return new ReadOnlyDirectory(ctx);
  }

  get config(): Configuration {
    return this.ctx.config;
  }

  /** The StorageManager (metrics, cache control). */
  get storage(): StorageManager {
    return this.ctx.storage;
  }

  /** The name of the VRF engine in use. */
  get vrfEngineName(): string {
    return this.ctx.vrf.name;
  }

  /** Whether lookups and histories serve stored VRF proofs (no key in this process). */
  get servesStoredVrfProofs(): boolean {
    return this.ctx.commitmentKey.length === 0;
  }

  /**
   * Whether the store holds the VRF proofs of every published version: `'complete'` for a
   * store whose writer stored them from its first epoch on (or that was backfilled since),
   * `'partial'` otherwise (versions published before have none). A server without the key
   * says so at start.
   */
  async storedVrfProofs(): Promise<'complete' | 'partial'> {
    const flag = await this.ctx.storage.db.getSetting(VRF_PROOFS_SETTING);
    return flag === VRF_PROOFS_COMPLETE ? 'complete' : 'partial';
  }

  /** The AZKS record as this reader currently sees it. */
  protected azksRecord(): Promise<AzksRecord> {
    return this.ctx.azks.read(this.ctx.storage);
  }

  /**
   * The epoch this reader serves and its root hash (spec 12.7): the latest, except that a
   * reader serving stored VRF proofs serves the latest epoch whose proofs the writer has
   * stored, which lags the latest for the seconds the writer takes to prove a new epoch.
   */
  async getEpochHash(): Promise<EpochHash> {
    const epoch = await this.servedEpoch();
    return { epoch, hash: await this.ctx.azks.rootHash(this.ctx.storage, epoch) };
  }

  /**
   * The latest committed epoch and its root hash, whatever this reader serves proofs at: the
   * two differ only for a reader without the key, while the writer stores the latest epoch's
   * VRF proofs.
   */
  async latestEpochHash(): Promise<EpochHash> {
    const { latestEpoch } = await this.azksRecord();
    return {
      epoch: latestEpoch,
      hash: await this.ctx.azks.rootHash(this.ctx.storage, latestEpoch),
    };
  }

  /** The epoch lookups and histories are proven at (see `getEpochHash`). */
  private async servedEpoch(): Promise<bigint> {
    const { latestEpoch } = await this.azksRecord();
    if (!this.servesStoredVrfProofs) return latestEpoch;
    if (this.proofsMark === null) this.proofsMark = await proofsThrough(this.ctx.storage.db);
    const mark = this.proofsMark;
    return mark !== undefined && mark < latestEpoch ? mark : latestEpoch;
  }

  /**
   * The root hash published at `epoch`, for auditors and clients that were not watching then.
   * The tree keeps only the latest root; an earlier one is read from the stored audit blob of
   * the step that follows it (spec 16), whose name holds the roots on both sides of the step.
   * @throws AkdError `DIRECTORY_INVALID_EPOCH` for an epoch after the latest;
   * `STORAGE_NOT_FOUND` when the store holds no blob of that step (a store from before audit
   * blobs were kept, until a writer fills them in).
   * @example (await dir.getRootHashAt(0n)).length // 32
   */
  async getRootHashAt(epoch: bigint): Promise<Uint8Array> {
    const { latestEpoch } = await this.azksRecord();
    if (epoch < 0n || epoch > latestEpoch) {
      throw new AkdError(
        'DIRECTORY_INVALID_EPOCH',
        `epoch ${epoch} is not published: the latest is ${latestEpoch}`,
      );
    }
    if (epoch === latestEpoch) return this.ctx.azks.rootHash(this.ctx.storage, latestEpoch);
    const [next] = await this.ctx.storage.db.getAuditBlobInfos([epoch + 1n]);
    if (next === undefined) {
      throw new AkdError(
        'STORAGE_NOT_FOUND',
        `the store holds no audit blob of epoch ${epoch + 1n}, which names the root of epoch ${epoch}`,
      );
    }
    return next.previousHash.slice();
  }

  /** The VRF public key clients verify with (32 bytes). */
  getPublicKey(): Uint8Array {
    return this.ctx.publicKey.slice();
  }

  /**
   * Proof of `label`'s current value at the latest epoch (spec 12.3).
   * @throws AkdError `DIRECTORY_LABEL_NOT_FOUND` for a label never published.
   */
  async lookup(label: AkdLabel): Promise<{ proof: LookupProof; epochHash: EpochHash }> {
    const { proofs, epochHash } = await this.batchLookup([label]);
    return { proof: proofs[0]!, epochHash };
  }

  /**
   * Lookup proofs of several labels against one epoch, with one preload (spec 12.4). The
   * first missing label fails the whole call.
   */
  async batchLookup(labels: AkdLabel[]): Promise<{ proofs: LookupProof[]; epochHash: EpochHash }> {
    return this.atLatestEpoch(async (epochHash) => ({
      proofs: await buildLookupProofs(this.ctx, labels, epochHash.epoch),
      epochHash,
    }));
  }

  /**
   * Runs a proof against the latest epoch this reader knows. When the store has moved on by
   * two or more epochs since (another process publishes), the tree no longer keeps the nodes
   * of that epoch: reading one fails with `STORAGE_NOT_FOUND`, and the proof is built again
   * against the store's new latest epoch, as long as the store keeps moving (a writer can
   * publish twice more while a slow reader builds one proof). When the epoch has not moved,
   * the error is real and is returned.
   */
  private async atLatestEpoch<T>(build: (epochHash: EpochHash) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await build(await this.getEpochHash());
      } catch (e) {
        const stale = isAkdError(e, 'STORAGE_NOT_FOUND');
        if (!stale || attempt >= MAX_EPOCH_RETRIES || (await this.refresh()) === undefined) throw e;
      }
    }
  }

  /** Proof of `label`'s versions, all or the most recent n (spec 12.5). */
  async keyHistory(
    label: AkdLabel,
    params: HistoryParams = { kind: 'complete' },
  ): Promise<{ proof: HistoryProof; epochHash: EpochHash }> {
    return this.atLatestEpoch(async (epochHash) => ({
      proof: await buildHistoryProof(this.ctx, label, params, epochHash.epoch),
      epochHash,
    }));
  }

  /**
   * Append-only proof from epoch `start` to `end` (spec 12.6), one step per epoch.
   * @throws AkdError `DIRECTORY_INVALID_EPOCH` unless `start < end <= latest`.
   */
  async audit(start: bigint, end: bigint): Promise<AppendOnlyProof> {
    if (start < 0n || start >= end) {
      throw new AkdError(
        'DIRECTORY_INVALID_EPOCH',
        `audit needs start < end, got ${start} and ${end}`,
      );
    }
    const { latestEpoch } = await this.azksRecord();
    if (end > latestEpoch) {
      throw new AkdError(
        'DIRECTORY_INVALID_EPOCH',
        `end epoch ${end} is beyond the latest epoch ${latestEpoch}`,
      );
    }
    const { storage, azks, parallelism } = this.ctx;
    storage.disableCacheCleaning();
    try {
      await azks.preloadAudit(storage, start, end, latestEpoch, {
        levels: parallelLevels(parallelism.preload),
        maxBatchSize: this.ctx.maxPreloadBatch,
      });
      return await azks.appendOnlyProof(storage, start, end, latestEpoch);
    } finally {
      storage.enableCacheCleaning();
    }
  }

  /**
   * Checks the store for a newer epoch, bypassing the cache (spec 12.7). When the store's
   * history continues the one this reader saw, only the cached AZKS record and root are
   * dropped: any other node a later epoch rewrote is read again where a walk finds it older
   * than its parent records (`readChild`, the preload), so the rest of the cache stays.
   * Otherwise (the store went back, or took another history, as after a fail-over that lost
   * epochs) the whole cache is flushed. A reader serving stored VRF proofs also reads again
   * how far the writer has stored them.
   * @returns the new epoch served, or undefined when it did not change.
   */
  async refresh(): Promise<bigint | undefined> {
    const before = await this.servedEpoch();
    const seen = await this.azksRecord();
    const current = await this.ctx.storage.getDirect({ kind: 'azks' });
    if (current.latestEpoch !== seen.latestEpoch) {
      if (await this.continues(seen.latestEpoch, current.latestEpoch)) {
        this.ctx.storage.forgetCached([AZKS_KEY, nodeKey(NodeLabel.root())]);
      } else {
        this.ctx.storage.flushCache();
      }
    }
    if (this.servesStoredVrfProofs) {
      this.proofsMark = await proofsThrough(this.ctx.storage.db);
    }
    const after = await this.servedEpoch();
    return after > before ? after : undefined;
  }

  /**
   * Whether the store's history at `latest` continues the one this reader cached at `seen`:
   * the root hash the stored audit blob of the step after `seen` starts from (spec 16) is the
   * root this reader cached. Epochs are numbered alike in two histories, so a cached node of
   * another history could pass for the version its parent records; without a cached root or a
   * blob to compare it with, the answer is no.
   */
  private async continues(seen: bigint, latest: bigint): Promise<boolean> {
    const storage = this.ctx.storage;
    if (latest < seen || storage.peekNode(NodeLabel.root()) === undefined) return false;
    const [step] = await storage.db.getAuditBlobInfos([seen + 1n]);
    if (step === undefined) return false;
    try {
      return bytesEqual(step.previousHash, await this.ctx.azks.rootHash(storage, seen));
    } catch (e) {
      // a root cached again since `seen` may keep no version that old
      if (isAkdError(e, 'STORAGE_NOT_FOUND')) return false;
      throw e;
    }
  }

  /**
   * Polls for new epochs every `periodMs` until `signal` aborts, calling `onEpoch` for each
   * new one (spec 12.7 `poll_for_azks_changes`). Errors go to `onError` and polling goes on.
   */
  async pollForAzksChanges(
    periodMs: number,
    signal: AbortSignal,
    onEpoch: (epoch: bigint) => void | Promise<void>,
    onError: (error: unknown) => void = () => {},
  ): Promise<void> {
    while (!signal.aborted) {
      await delay(periodMs, undefined, { signal }).catch(() => undefined); // an abort ends the wait
      if (signal.aborted) break;
      try {
        const epoch = await this.refresh();
        if (epoch !== undefined) await onEpoch(epoch);
      } catch (e) {
        onError(e);
      }
    }
  }

  /** Releases the VRF engine (worker threads). */
  async close(): Promise<void> {
    await this.ctx.vrf.close();
  }
}
