/**
 * The AZKS (spec 7.4, 8, 10): the append-only tree as one object over the storage manager:
 * creating an empty tree, batch insertion into a transaction, root hashes and every proof.
 * It knows the storage seam and nothing of any driver.
 */

import {
  AkdError,
  isAkdError,
  NodeLabel,
  treeHasherOf,
  type TreeHasher,
  type AppendOnlyProof,
  type AzksElement,
  type Configuration,
  type MembershipProof,
  type NonMembershipProof,
} from '@akd-ts/core';
import {
  AZKS_KEY,
  type AzksRecord,
  type RecordReader,
  type StorageManager,
  type Transaction,
} from '@akd-ts/storage';
import { appendOnlyProof } from './tree/audit-proof.js';
import { arenaStepProof } from './tree/arena/audit-step.js';
import { ArenaNodeBatch } from './tree/arena/batch.js';
import { ElementPacker, packElements } from './tree/arena/elements.js';
import { collectAfterWalk, walkCollector } from './release-memory.js';
import { loadTree } from './tree/arena/load.js';
import { insertAll, reservedSlots, type ParallelInsertion } from './tree/arena/run.js';
import { describeConfig } from './worker-config.js';
import { holdTreeWorkers, treeWorkers } from './tree/arena/workers.js';
import { parallelDegree, parallelLevels, type ParallelismOption } from './parallelism.js';
import { newRoot } from './tree/nodes.js';
import { readRoot } from './tree/node-io.js';
import { auditExpansion, preload, towardTargets, type PreloadOptions } from './tree/preload.js';
import { membershipProof, nonMembershipProof } from './tree/proofs.js';

const ROOT = NodeLabel.root();
const MAX_EPOCH = BigInt(Number.MAX_SAFE_INTEGER);
/** Default least number of elements a worker task takes (smaller subtrees stay on the caller). */
const MIN_TASK = 2048;

/** How an insertion loads its nodes (its preload) and whether worker threads insert. */
export interface InsertOptions extends PreloadOptions {
  /**
   * Parallelism of the insertion itself (spec 13.1): with a degree, worker threads insert and
   * hash the subtrees below the parallel levels (2^levels of them at once). Default:
   * disabled, all on the calling thread.
   */
  insertion?: ParallelismOption;
  /** The least number of elements a worker task takes (default 2,048). */
  minTaskSize?: number;
}

export class Azks {
  readonly #hasher: TreeHasher;

  constructor(readonly config: Configuration) {
    this.#hasher = treeHasherOf(config);
  }

  /** The AZKS record, or undefined in a store that has none yet. */
  async find(reader: RecordReader): Promise<AzksRecord | undefined> {
    try {
      return await reader.get(AZKS_KEY);
    } catch (e) {
      if (isAkdError(e, 'STORAGE_NOT_FOUND')) return undefined;
      throw e;
    }
  }

  /** The AZKS record; `STORAGE_NOT_FOUND` in an uninitialised store. */
  async read(reader: RecordReader): Promise<AzksRecord> {
    return reader.get(AZKS_KEY);
  }

  /**
   * Writes an empty tree (spec 7.4): the epoch-0 root, then the AZKS record `{0, 1}`, each
   * written directly (the AZKS record last, so a crash in between leaves a store that is
   * still uninitialised).
   */
  async create(storage: StorageManager): Promise<AzksRecord> {
    await storage.set({
      kind: 'treeNode',
      label: ROOT,
      latest: newRoot(ROOT, this.config),
      previous: undefined,
    });
    const azks: AzksRecord = { kind: 'azks', latestEpoch: 0n, numNodes: 1n };
    await storage.set(azks);
    return azks;
  }

  /** The published root hash at the AZKS's latest epoch `epoch`. */
  async rootHash(reader: RecordReader, epoch: bigint): Promise<Uint8Array> {
    const root = await readRoot(reader, ROOT, epoch);
    return this.config.computeRootHashFromVal(root.hash);
  }

  /**
   * Inserts `elements` as epoch `azks.latestEpoch + 1` inside `tx` (spec 8) and logs the
   * updated AZKS record. The nodes the insertion reads are loaded first, with batched reads
   * (its preload); the written nodes go to the transaction as one batch. `elements` may come
   * as an `ElementPacker`, which holds them as bytes (a publish's: see elements.ts).
   * @returns the new AZKS record.
   * @throws AkdError `DIRECTORY_TREE` for elements that are not distinct leaves with 32-byte
   * values, `DIRECTORY_INVALID_EPOCH` past epoch 2^53 - 1, or a storage error.
   */
  async insert(
    tx: Transaction,
    azks: AzksRecord,
    elements: AzksElement[] | ElementPacker,
    options: InsertOptions,
    onPhase: (phase: 'preload' | 'tree') => void = () => {},
  ): Promise<AzksRecord> {
    return (await this.#insert(tx, azks, elements, options, onPhase, false)).record;
  }

  /**
   * `insert`, also returning the encoded append-only proof of the step it made (spec 10.5,
   * the audit blob's data), taken from the nodes the insertion holds; `step` is undefined
   * when they do not cover the proof (read it from the transaction then) or nothing was
   * inserted. With `takeStep`, the proof goes to it instead, with the new root hash (spec
   * 7.4), as soon as it is built: before the insertion keeps what its commit reads and logs
   * its records, so that a caller that stores the proof then need not hold its tens of
   * megabytes through them (`step` is then undefined; `takeStep` is not called when the
   * nodes do not cover the proof).
   */
  async insertStep(
    tx: Transaction,
    azks: AzksRecord,
    elements: AzksElement[] | ElementPacker,
    options: InsertOptions,
    onPhase: (phase: 'preload' | 'tree') => void = () => {},
    takeStep?: (step: Uint8Array, rootHash: Uint8Array) => Promise<void>,
  ): Promise<{ record: AzksRecord; step: Uint8Array | undefined }> {
    return this.#insert(tx, azks, elements, options, onPhase, takeStep ?? true);
  }

  async #insert(
    tx: Transaction,
    azks: AzksRecord,
    elements: AzksElement[] | ElementPacker,
    options: InsertOptions,
    onPhase: (phase: 'preload' | 'tree') => void,
    withStep: boolean | ((step: Uint8Array, rootHash: Uint8Array) => Promise<void>),
  ): Promise<{ record: AzksRecord; step: Uint8Array | undefined }> {
    const el = elements instanceof ElementPacker ? elements.pack() : packElements(elements);
    const epoch = azks.latestEpoch + 1n;
    if (epoch > MAX_EPOCH) {
      throw new AkdError('DIRECTORY_INVALID_EPOCH', `epoch ${epoch} is beyond 2^53 - 1`);
    }
    onPhase('preload');
    let created = 0;
    let step: Uint8Array | undefined;
    if (el.count > 0) {
      const hasher = this.#hasher;
      const release = holdTreeWorkers();
      let loaded: Awaited<ReturnType<typeof loadTree>>;
      try {
        const parallel = await this.#parallel(options, el.count);
        loaded = await loadTree(
          tx,
          ROOT,
          epoch,
          el,
          { ...options, collectGarbage: options.collectGarbage ?? walkCollector(el.count) },
          reservedSlots(el.count, parallel?.minTask ?? MIN_TASK),
          hasher.labelValueLength,
          this.config,
          Number(azks.numNodes),
        );
        collectAfterWalk(el.count);
        onPhase('tree');
        created = await insertAll(loaded.arena, loaded.count, el, hasher, Number(epoch), parallel);
      } finally {
        release();
      }
      if (withStep !== false) step = arenaStepProof(loaded.arena, hasher, Number(epoch));
      if (step !== undefined && typeof withStep === 'function') {
        // slot 0 is the root (spec 7.4: its hash gives the root hash)
        const root = loaded.arena.hashes.slice(0, 32);
        await withStep(step, this.config.computeRootHashFromVal(root));
        step = undefined;
      }
      await loaded.keepWritten();
      tx.logNodeBatch(new ArenaNodeBatch(loaded.arena, loaded));
    } else onPhase('tree');
    const next: AzksRecord = {
      kind: 'azks',
      latestEpoch: epoch,
      numNodes: azks.numNodes + BigInt(created),
    };
    tx.set(next);
    return { record: next, step };
  }

  /**
   * Worker threads for an insertion, or undefined for one on the calling thread: with
   * parallelism disabled, for a configuration workers cannot rebuild, or where the worker
   * script cannot load (a fixed degree then throws WorkersUnavailableError).
   */
  async #parallel(options: InsertOptions, count: number): Promise<ParallelInsertion | undefined> {
    const option = options.insertion;
    const degree = option === undefined ? undefined : parallelDegree(option);
    const config = describeConfig(this.config);
    if (option === undefined || degree === undefined || config === undefined) return undefined;
    const minTask = Math.max(1, options.minTaskSize ?? MIN_TASK);
    // an insertion smaller than one task never uses the pool: do not start it for one
    if (count < minTask) return undefined;
    const pool = await treeWorkers(option.kind === 'static');
    if (pool === undefined) return undefined;
    return {
      pool,
      config,
      levels: parallelLevels(option) ?? 0,
      minTask,
    };
  }

  /** Warms the cache with the paths toward `targets` (spec 13.2, 13.3). */
  async preloadFor(
    reader: RecordReader,
    targets: NodeLabel[],
    epoch: bigint,
    options: PreloadOptions,
  ): Promise<number> {
    return preload(reader, ROOT, epoch, towardTargets(targets), options, targets);
  }

  /** Warms the cache with every node an audit of [start, end] reads (spec 13.4). */
  async preloadAudit(
    reader: RecordReader,
    start: bigint,
    end: bigint,
    epoch: bigint,
    options: PreloadOptions,
  ): Promise<number> {
    return preload(reader, ROOT, epoch, auditExpansion(start, end), options);
  }

  membershipProof(reader: RecordReader, label: NodeLabel, epoch: bigint): Promise<MembershipProof> {
    return membershipProof(this.config, reader, ROOT, label, epoch);
  }

  nonMembershipProof(
    reader: RecordReader,
    label: NodeLabel,
    epoch: bigint,
  ): Promise<NonMembershipProof> {
    return nonMembershipProof(this.config, reader, ROOT, label, epoch);
  }

  appendOnlyProof(
    reader: RecordReader,
    start: bigint,
    end: bigint,
    latest: bigint,
  ): Promise<AppendOnlyProof> {
    return appendOnlyProof(this.config, reader, ROOT, start, end, latest);
  }
}
