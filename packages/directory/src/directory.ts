/**
 * Directory (spec 12.1, 12.2): the writer. It holds the store's writer lock for its lifetime,
 * creates the AZKS in an empty store, and publishes batches of updates as new epochs. A
 * publish is all or nothing: its records are written in one atomic commit, the AZKS record
 * last, and any failure before that leaves the store exactly as it was.
 */

import {
  AkdError,
  VersionFreshness,
  bytesEqual,
  describeLabel,
  toHex,
  type AkdLabel,
  type AkdValue,
  type EpochHash,
  type NodeLabel,
} from '@akd-ts/core';
import {
  collectNodeVersions,
  type Collected,
  type CollectionProgress,
  type ValueStateRecord,
  type VrfProofRecord,
  type WriterLock,
  type WriterLockStatus,
} from '@akd-ts/storage';
import { exportAuditBlobs } from './audit-blobs.js';
import { missingAuditBlobs, stepAuditBlob } from './audit-store/write.js';
import type { DirectoryContext } from './context.js';
import { DEFAULT_LIMITS, type PublishLimits } from './limits.js';
import { parallelLevels } from './parallelism.js';
import { ElementPacker } from './tree/arena/elements.js';
import { ReadOnlyDirectory, makeContext, type DirectoryOptions } from './read-only-directory.js';
import { releaseAfterLargeEpoch } from './release-memory.js';
import { oldestServedEpoch } from './version-collection.js';
import type { LabelsListener, VrfJob } from './vrf/engine.js';
import type { VrfKeyStore } from './vrf/key-store.js';
import { checkVrfKey } from './vrf/key-check.js';
import { backfillVrfProofs, type BackfillOptions } from './vrf/backfill.js';
import { VRF_PROOFS_COMPLETE, VRF_PROOFS_SETTING } from './vrf/stored-proofs.js';
import { SWEEPS_FROM_SETTING } from './vrf/marker-sweeps.js';
import { planPublishProofs } from './vrf/publish-proofs.js';
import { startEarlyProofs, warmIdleThreads, type EarlyProofs } from './vrf/early-proofs.js';
import {
  VRF_PROOFS_THROUGH_SETTING,
  catchUpProofs,
  defersProofs,
  proofsThrough,
  proveEpoch,
  proveRecords,
} from './vrf/epoch-proofs.js';

/**
 * Nodes a level of an insertion's preload reads at once from a store that answers in this
 * process (`PreloadOptions.chunkNodes`): about one SQLite read statement. Parts of 128 and of
 * 8,192 nodes made as many page reads at 10M labels (bench/RESULTS.md).
 */
const LOCAL_WALK_CHUNK = 1024;

/** One update of a publish. */
export interface Update {
  label: AkdLabel;
  value: AkdValue;
}

export interface WritableDirectoryOptions extends DirectoryOptions {
  /** Publishing computes VRFs: the writer always needs the secret key. */
  vrfKeys: VrfKeyStore;
  limits?: Partial<PublishLimits>;
}

/** Where a publish is: `done` of `total` units of the current phase. */
export interface PublishProgress {
  phase: 'versions' | 'vrf' | 'preload' | 'tree' | 'commit' | 'done';
  done: number;
  total: number;
}

export interface PublishOptions {
  /** Called as the publish advances (VRF progress in chunks of about a thousand labels). */
  onProgress?: (progress: PublishProgress) => void;
}

/** A committed publish, and what stores its VRF proofs after it when they are deferred. */
interface Published {
  epochHash: EpochHash;
  storeProofs?: () => Promise<void>;
}

/** What a publish is about to insert: tree elements and value states. */
interface PublishPlan {
  elements: ElementPacker;
  states: ValueStateRecord[];
  /** The epoch's VRF proofs under way on idle threads, for a store that defers them. */
  early: EarlyProofs | undefined;
}

/**
 * The key directory's writer. Each publish also stores the audit blob of its epoch step
 * (spec 16), written before the epoch commits, so every published epoch has one.
 *
 * @example
 * ```ts
 * const dir = await Directory.open({
 *   config: new WhatsAppV1Configuration(),
 *   storage: new StorageManager(new MemoryDatabase()),
 *   vrfKeys: InMemoryVrfKeyStore.generate(),
 * });
 * const { epoch, hash } = await dir.publish([{ label: utf8('alice'), value: utf8('key-1') }]);
 * ```
 */
export class Directory extends ReadOnlyDirectory {
  private readonly limits: PublishLimits;
  private queue: Promise<unknown> = Promise.resolve();
  /** The lock generation the cache was read under (see `lockStatus`). */
  private generation = 0;

  private constructor(
    ctx: DirectoryContext,
    private readonly lock: WriterLock,
    limits: PublishLimits,
  ) {
    super(ctx);
    this.limits = limits;
  }

  /**
   * Opens the directory for writing: takes the store's writer lock, then reads the AZKS or,
   * in an empty store, creates it. Only a missing AZKS creates one; any other read error is
   * returned, so a connection problem can never reset a directory.
   * @throws AkdError `STORAGE_LOCKED` when another writer holds the store;
   * `VRF_INVALID_SECRET_KEY` when the key is not the directory's (vrf/key-check.ts: the store
   * records the public key of the first writer to open it); TypeError without `vrfKeys`.
   */
  static override async open(options: WritableDirectoryOptions): Promise<Directory> {
    if (options.vrfKeys === undefined) {
      throw new TypeError('a Directory publishes, which computes VRFs: give it vrfKeys');
    }
    const lock = await options.storage.db.acquireWriterLock();
    let ctx: DirectoryContext | undefined;
    try {
      ctx = await makeContext(options);
      const db = ctx.storage.db;
      // before anything is written: a key of another directory changes nothing
      await checkVrfKey(ctx, 'secret', true);
      if ((await ctx.azks.find(ctx.storage)) === undefined) {
        await ctx.azks.create(ctx.storage);
        // every version of this store will have its proofs stored, markers by sweeps past
        // each publish's horizon from the start
        if (ctx.storeVrfProofs) {
          await db.setSetting(VRF_PROOFS_SETTING, VRF_PROOFS_COMPLETE);
          if (db.listUsernames !== undefined) await db.setSetting(SWEEPS_FROM_SETTING, '0');
        }
        if (defersProofs(ctx)) await db.setSetting(VRF_PROOFS_THROUGH_SETTING, '0');
      } else if (!ctx.storeVrfProofs && (await db.getSetting(VRF_PROOFS_SETTING)) !== undefined) {
        // the versions this writer publishes will have none; writers after it store every
        // marker at publish (no sweeps) until a backfill completes the store again, and
        // readers serve the latest epoch (VRF_PROOF_MISSING where a proof is lacking)
        await db.setSetting(VRF_PROOFS_SETTING, 'partial');
        await db.setSetting(SWEEPS_FROM_SETTING, '');
        await db.setSetting(VRF_PROOFS_THROUGH_SETTING, '');
      } else if (defersProofs(ctx) && (await proofsThrough(db)) === undefined) {
        // earlier writers stored each epoch's proofs before its commit: none is owed
        const { latestEpoch } = await ctx.azks.read(ctx.storage);
        await db.setSetting(VRF_PROOFS_THROUGH_SETTING, latestEpoch.toString());
      }
      const writer = new Directory(ctx, lock, { ...DEFAULT_LIMITS, ...options.limits });
      // proofs a stopped writer still owed are caught up at once, not at the next publish
      const opened = ctx;
      if (defersProofs(opened)) {
        writer
          .enqueue(() => {
            writer.checkLock();
            return catchUpProofs(opened, writer.holdsLock());
          })
          .catch(() => undefined);
      }
      return writer;
    } catch (e) {
      await ctx?.vrf.close();
      await lock.release();
      throw e;
    }
  }

  /**
   * Whether this directory holds the store's writer lock. A lock on a database connection
   * (PostgreSQL) can be lost with it and taken again; other locks are held until `close`.
   */
  lockStatus(): WriterLockStatus {
    return this.lock.status?.() ?? { held: true, generation: 0, final: false };
  }

  /** Calls `listener` when the lock's status changes; returns a function that stops it. */
  onLockStatus(listener: (status: WriterLockStatus) => void): () => void {
    return this.lock.onStatus?.(listener) ?? (() => {});
  }

  /**
   * Refuses to start a publish without the lock; after the lock was taken again, forgets the
   * cache, since another writer may have published meanwhile.
   */
  private checkLock(): void {
    const status = this.lockStatus();
    if (!status.held) {
      throw new AkdError(
        status.final ? 'STORAGE_LOCKED' : 'STORAGE_CONNECTION',
        `this directory does not hold the writer lock: ${status.reason ?? 'lost'}`,
      );
    }
    if (status.generation !== this.generation) {
      this.ctx.storage.flushCache();
      this.generation = status.generation;
    }
  }

  /**
   * Publishes `updates` as the next epoch (spec 12.2). Labels whose value is unchanged are
   * skipped; when nothing is left, no epoch is created and the current one is returned.
   * Concurrent calls run one after another.
   * @throws AkdError `DIRECTORY_DUPLICATE_LABEL`, `DIRECTORY_LIMIT`, or a storage error (then
   * nothing of the publish is visible).
   */
  publish(updates: Update[], options: PublishOptions = {}): Promise<EpochHash> {
    const run = this.queue.then(() => this.publishNow(updates, options.onProgress ?? (() => {})));
    // the epoch's VRF proofs are stored once it committed, before anything queued after it;
    // a failure there is caught up by the next publish or `vrfProofsStored`
    this.queue = run.then(
      (done) => done.storeProofs?.().catch(() => undefined),
      () => undefined,
    );
    return run.then((done) => done.epochHash);
  }

  /** Runs `task` after everything queued before it (publishes and their proofs). */
  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Waits until every epoch published so far has its VRF proofs stored, so that processes
   * without the key serve it (a publish resolves once its epoch commits; its proofs follow).
   * Proofs whose writing failed are tried again here.
   * @returns the number of epochs whose proofs had to be tried again (0 normally).
   * @throws the storage or VRF error that stopped them (the next publish tries again too);
   * AkdError `STORAGE_LOCKED` or `STORAGE_CONNECTION` when this writer lost its lock (the
   * writer that holds it stores them).
   * @example await writer.publish(updates); await writer.vrfProofsStored();
   */
  vrfProofsStored(): Promise<number> {
    return this.enqueue(() => {
      this.checkLock();
      return catchUpProofs(this.ctx, this.holdsLock());
    });
  }

  private checkUpdates(updates: Update[]): void {
    const { maxLabelBytes, maxValueBytes, maxUpdates, allowEmptyValues } = this.limits;
    if (updates.length > maxUpdates) {
      throw new AkdError(
        'DIRECTORY_LIMIT',
        `${updates.length} updates exceed the limit of ${maxUpdates}`,
      );
    }
    const seen = new Set<string>();
    for (const { label, value } of updates) {
      if (!(label instanceof Uint8Array) || !(value instanceof Uint8Array)) {
        throw new TypeError('labels and values must be Uint8Arrays');
      }
      if (label.length === 0 || label.length > maxLabelBytes) {
        throw new AkdError(
          'DIRECTORY_LIMIT',
          `a label must have 1 to ${maxLabelBytes} bytes, not ${label.length}`,
        );
      }
      if (value.length > maxValueBytes) {
        throw new AkdError(
          'DIRECTORY_LIMIT',
          `a value must have at most ${maxValueBytes} bytes, not ${value.length}`,
        );
      }
      if (value.length === 0 && !allowEmptyValues) {
        throw new AkdError(
          'DIRECTORY_LIMIT',
          'empty values are refused: verifiers cannot tell them from tombstones',
        );
      }
      const key = toHex(label);
      if (seen.has(key)) {
        throw new AkdError(
          'DIRECTORY_DUPLICATE_LABEL',
          `label ${describeLabel(label)} appears more than once in one publish`,
        );
      }
      seen.add(key);
    }
  }

  /** Node labels of `jobs`, reporting progress as the engine advances. */
  private async nodeLabels(
    jobs: VrfJob[],
    progress: (p: PublishProgress) => void,
    onLabels: LabelsListener,
  ) {
    const total = jobs.length;
    progress({ phase: 'vrf', done: 0, total });
    if (total === 0) return [];
    const labels = await this.ctx.vrf.nodeLabels(
      jobs,
      (done) => {
        if (done < total) progress({ phase: 'vrf', done, total });
      },
      onLabels,
    );
    progress({ phase: 'vrf', done: total, total });
    return labels;
  }

  /** Decides the tree elements and value states of a publish at `epoch` (spec 12.2 steps 3-5). */
  private async plan(
    updates: Update[],
    current: bigint,
    epoch: bigint,
    progress: (p: PublishProgress) => void,
  ): Promise<PublishPlan> {
    const { storage, config, commitmentKey } = this.ctx;
    const latest = new Map(
      (
        await storage.getUserStateVersions(
          updates.map((u) => u.label),
          { kind: 'leqEpoch', epoch: current },
        )
      ).map((v) => [toHex(v.username), v]),
    );
    const jobs: VrfJob[] = [];
    /** The new value of each Fresh job, by job index (Stale jobs have none). */
    const values: (AkdValue | undefined)[] = [];
    const fresh: { update: Update; version: bigint; job: number }[] = [];
    for (const update of updates) {
      const prior = latest.get(toHex(update.label));
      if (prior !== undefined && bytesEqual(prior.value, update.value)) continue;
      const version = (prior?.version ?? 0n) + 1n;
      if (prior !== undefined) {
        jobs.push({
          label: update.label,
          freshness: VersionFreshness.Stale,
          version: prior.version,
        });
        values.push(undefined);
      }
      fresh.push({ update, version, job: jobs.length });
      const job: VrfJob = { label: update.label, freshness: VersionFreshness.Fresh, version };
      // a first version's existence proof is stored after the commit: the engine may keep
      // what the evaluation computed toward it (a later version's was stored as a marker)
      if (version === 1n && this.ctx.storeVrfProofs) job.keep = true;
      jobs.push(job);
      values.push(update.value);
    }
    // each chunk's tree elements are computed as its labels arrive, while the engine works
    // on the next chunks; any the engine did not announce, once it is done. They go straight
    // into packed bytes: as objects they would outlive this plan through the whole insertion
    const elements = new ElementPacker(jobs.length);
    const element = (i: number, label: NodeLabel) => {
      const value = values[i];
      elements.set(
        i,
        label,
        value === undefined
          ? config.staleAzksValue
          : config.computeFreshAzksValue(commitmentKey, label, jobs[i]!.version, value),
      );
    };
    // a deferred epoch's proofs get a head start on the engine's idle threads: they need the
    // versions only, and most of the publish from here leaves a core to them
    const early = defersProofs(this.ctx)
      ? await startEarlyProofs(
          this.ctx,
          fresh.map(({ update, version }) => ({ username: update.label, version })),
          epoch,
        )
      : undefined;
    let labels: NodeLabel[];
    try {
      labels = await this.nodeLabels(jobs, progress, (start, chunk) => {
        for (let k = 0; k < chunk.length; k++) element(start + k, chunk[k]!);
      });
      for (let i = 0; i < jobs.length; i++) if (!elements.has(i)) element(i, labels[i]!);
    } catch (e) {
      await this.endEpochProofs(early);
      throw e;
    }
    const states: ValueStateRecord[] = fresh.map(({ update, version, job }) => ({
      kind: 'valueState',
      username: update.label,
      epoch,
      version,
      label: labels[job]!,
      value: update.value,
    }));
    return { elements, states, early };
  }

  private async publishNow(
    updates: Update[],
    progress: (p: PublishProgress) => void,
  ): Promise<Published> {
    this.checkUpdates(updates);
    this.checkLock();
    // what an earlier epoch still owes goes first, so that the mark lags one epoch at most
    await catchUpProofs(this.ctx, this.holdsLock());
    const { storage, azks, parallelism } = this.ctx;
    const record = await azks.read(storage);
    const epoch = record.latestEpoch + 1n;
    // read before the plan starts any work (the early proofs) that a failure must stop
    const previousHash = await azks.rootHash(storage, record.latestEpoch);
    progress({ phase: 'versions', done: 0, total: updates.length });
    if (defersProofs(this.ctx)) warmIdleThreads(this.ctx, updates.length);
    // the plan, its tree elements and the proofs to store are let go of as soon as they are
    // used: for 100,000 updates, most of a million objects the commit has no use for
    let plan: PublishPlan | undefined = await this.plan(
      updates,
      record.latestEpoch,
      epoch,
      progress,
    );
    const { states, early } = plan;
    let elements: ElementPacker | undefined = plan.elements;
    if (elements.count === 0) {
      progress({ phase: 'done', done: 0, total: 0 });
      return { epochHash: await this.getEpochHash() };
    }
    const leaves = elements.count;
    plan = undefined;
    // a store that cannot list its labels could not find owed proofs again: its epochs get
    // theirs before they commit, computed while the tree is built (on the engine's threads);
    // other stores decide and compute them once the epoch committed (epoch-proofs.ts)
    const deferred = defersProofs(this.ctx);
    let proving: Promise<VrfProofRecord[]> | undefined;
    if (this.ctx.storeVrfProofs && !deferred) {
      // no sweeps here: they run only where a store can list its labels (sweepsFrom), whose
      // epochs are proved after they commit
      const { proofJobs, nonces, stored } = await planPublishProofs(this.ctx, states, epoch);
      proving = proveRecords(this.ctx, proofJobs, (i) => nonces.get(i)).then((proved) =>
        stored.concat(proved),
      );
      proving.catch(() => undefined); // a failure reaches the await below, or the rollback
    }

    const tx = storage.beginTransaction();
    try {
      // the step's audit blob is stored as soon as the insertion built it, so that the writer
      // does not hold its tens of megabytes through the commit. A crash before the commit
      // leaves a blob of an epoch that does not exist yet (readers never look past the latest
      // epoch), and the retried publish replaces it; after the commit, the epoch always has
      // its blob
      let blobStored = false;
      const storeStep = async (data: Uint8Array, hash: Uint8Array) => {
        await storage.db.setAuditBlob({ epoch, previousHash, currentHash: hash, data });
        blobStored = true;
      };
      await azks.insertStep(
        tx,
        record,
        elements,
        {
          levels: parallelLevels(parallelism.preload),
          maxBatchSize: this.ctx.maxPreloadBatch,
          insertion: parallelism.insertion,
          minTaskSize: parallelism.minTaskSize,
          storeKeepsVersions: storage.db.nodeLayout === 'versions',
          chunkNodes: storage.db.readLatency === 'local' ? LOCAL_WALK_CHUNK : undefined,
        },
        (phase) => progress({ phase, done: 0, total: leaves }),
        storeStep,
      );
      elements = undefined;
      tx.batchSet(states);
      // read from the log before committing: nothing may fail once the epoch is published
      const hash = await azks.rootHash(tx, epoch);
      progress({ phase: 'commit', done: 0, total: tx.size });
      if (proving !== undefined) {
        // proofs are a function of their key, and a retried publish writes each version's
        // nonce again, so what a failed publish left is never wrong
        await storage.db.setVrfProofs(await proving);
        proving = undefined;
        this.ctx.vrf.forgetKept?.();
      }
      // where the insertion's nodes did not cover the step (a tree that breaks its
      // invariants), its proof is read back through the transaction
      if (!blobStored) {
        await storage.db.setAuditBlob(await stepAuditBlob(this.ctx, tx, epoch, previousHash, hash));
      }
      await tx.commit();
      progress({ phase: 'done', done: updates.length, total: updates.length });
      const storeProofs = deferred ? () => this.storeProofs(epoch, states, early) : undefined;
      return { epochHash: { epoch, hash }, storeProofs };
    } catch (e) {
      if (!tx.ended) await tx.rollback();
      await this.endEpochProofs(early);
      throw e;
    }
  }

  /**
   * After a tombstone, the stored nonces of the erased versions become those of the empty
   * value (spec 6, 14.6), as a proof computed with the key has them: the nonce of the erased
   * value would let whoever reads the store test guesses of it against the leaf.
   */
  private async restampNonces(label: AkdLabel, epoch: bigint): Promise<void> {
    const { storage, config, commitmentKey } = this.ctx;
    const states = (await storage.getUserData(label)).filter((s) => s.epoch <= epoch);
    const stored = new Map(
      (
        await storage.db.getVrfProofs(
          states.map((s) => ({ label, freshness: VersionFreshness.Fresh, version: s.version })),
        )
      ).map((r) => [r.version, r]),
    );
    const records: VrfProofRecord[] = [];
    for (const s of states) {
      const r = stored.get(s.version);
      if (r === undefined) continue; // a version without stored proofs (never backfilled)
      const nonce = config.getCommitmentNonce(commitmentKey, s.label, s.version, s.value);
      records.push({ ...r, nonce });
    }
    await storage.db.setVrfProofs(records);
  }

  /**
   * Ends the proving of an epoch's proofs, stored or given up: the idle threads' early proofs
   * stop, and the engine lets go of the points its evaluations kept toward them.
   */
  private async endEpochProofs(early: EarlyProofs | undefined): Promise<void> {
    await early?.stop();
    this.ctx.vrf.forgetKept?.();
  }

  /**
   * Stores the proofs of `epoch`, which this writer just committed, unless it lost the lock
   * meanwhile: the mark must not move behind what a writer after it stored (that writer
   * catches up what this one owes).
   */
  private async storeProofs(
    epoch: bigint,
    states: ValueStateRecord[],
    early: EarlyProofs | undefined,
  ): Promise<void> {
    // the lock's generation of the commit, not of whatever holds it after the wait below
    const mayWrite = this.holdsLock();
    try {
      // the committed epoch's insertion is garbage now: free it before the proofs fill the
      // heap (the idle threads go on meanwhile, and through the plan: `proveEpoch` stops them)
      await releaseAfterLargeEpoch(states.length);
      await proveEpoch(this.ctx, epoch, states, mayWrite, { early });
    } finally {
      // a plan that failed leaves them proving an epoch nobody stores
      await this.endEpochProofs(early);
    }
  }

  /**
   * Whether this writer still holds the lock it holds now (the same generation): what a write
   * that runs a while, as storing an epoch's proofs, asks before each step, so that a writer
   * that lost its lock never writes behind the one that took it.
   */
  private holdsLock(): () => boolean {
    const generation = this.generation;
    return () => {
      const status = this.lockStatus();
      return status.held && status.generation === generation;
    };
  }

  /**
   * Erases the stored values of `label` published at or before `epoch` (spec 14.6). Proofs
   * stay valid; history verification then needs `allowMissingValues`.
   * @returns the number of values erased.
   * @throws AkdError `STORAGE_LOCKED` or `STORAGE_CONNECTION` when this writer lost its lock
   */
  async tombstone(label: AkdLabel, epoch: bigint): Promise<number> {
    return this.enqueue(async () => {
      this.checkLock();
      // owed proofs first: they would carry the nonces of the values erased here
      await catchUpProofs(this.ctx, this.holdsLock());
      const erased = await this.ctx.storage.tombstoneValueStates(label, epoch);
      if (erased > 0) await this.restampNonces(label, epoch);
      return erased;
    });
  }

  /**
   * Stores the audit blobs of the epochs published before the store kept them (a store
   * migrated from an older version), oldest first, each step built by `exportAuditBlobs` and
   * queued like a publish, so that a publish waits for one step at most.
   *
   * @returns how many blobs were written (fewer when `signal` aborted).
   * @example await writer.fillMissingAuditBlobs({ onBlob: (e) => log(`blob of epoch ${e}`) });
   */
  async fillMissingAuditBlobs(
    options: { signal?: AbortSignal; onBlob?: (epoch: bigint) => void } = {},
  ): Promise<number> {
    const { latestEpoch } = await this.azksRecord();
    let written = 0;
    for (const epoch of await missingAuditBlobs(this.ctx.storage.db, latestEpoch)) {
      if (options.signal?.aborted) break;
      await this.enqueue(async () => {
        for await (const blob of exportAuditBlobs(this, epoch - 1n, epoch)) {
          const { previousHash, currentHash } = blob.name;
          await this.ctx.storage.db.setAuditBlob({
            epoch,
            previousHash,
            currentHash,
            data: blob.data,
          });
        }
      });
      written++;
      options.onBlob?.(epoch);
    }
    return written;
  }

  /**
   * Stores the VRF proofs of every version of a store written before publishes stored them
   * (vrf/backfill.ts), a batch of labels at a time, each batch queued like a publish.
   * Resumable: a run that stops (an abort, a crash) is continued by the next one.
   *
   * @example await writer.backfillVrfProofs({ onProgress: (n) => log(`${n} labels`) });
   */
  backfillVrfProofs(options: BackfillOptions = {}): Promise<{ labels: number; complete: boolean }> {
    return this.enqueue(() => backfillVrfProofs(this.ctx, options));
  }

  /**
   * Deletes the node versions no reader reaches any more, in a store of the versions layout
   * (version-collection.ts), an epoch at a time, resuming after the last one collected.
   * Queued like a publish; stops, with `stopped`, when this writer loses its lock.
   * @throws RangeError for a store of records, or a store that cannot delete versions
   * @example await writer.collectNodeVersions({ onProgress: (p) => log(`epoch ${p.epoch}`) });
   */
  collectNodeVersions(
    options: { onProgress?: (progress: CollectionProgress) => void } = {},
  ): Promise<Collected> {
    return this.enqueue(async () => {
      this.checkLock();
      const db = this.ctx.storage.db;
      return collectNodeVersions(db, {
        through: await oldestServedEpoch(db),
        mayWrite: this.holdsLock(),
        ...(options.onProgress === undefined ? {} : { onProgress: options.onProgress }),
      });
    });
  }

  /**
   * Waits for queued publishes and the VRF proofs they store, releases the writer lock and the
   * VRF engine. Proofs whose writing failed stay owed: the next writer stores them.
   */
  override async close(): Promise<void> {
    await this.queue;
    await this.lock.release();
    await super.close();
  }
}
