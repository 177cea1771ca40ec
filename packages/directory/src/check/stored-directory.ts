/**
 * The consistency check of a stored directory: whether the AZKS record, the tree and the
 * stored audit blobs tell one story, as a backup or a restore must know before a store is
 * trusted. Every publish of epoch E (spec 8, 12.2) inserts at least one leaf, so it rewrites
 * the root with `last_epoch = E` (keeping the epoch E - 1 root as its previous version),
 * writes value states of epoch E, counts its new nodes in `num_nodes`, and stores the audit
 * blob of the step E - 1 -> E between the two roots. A store whose AZKS record was altered,
 * or whose records come from different epochs, breaks one of these.
 *
 * The standard check reads the AZKS record, the root and its children, and the name of every
 * stored audit blob; with the driver's totals (a scan of its tables) it also compares the
 * number of nodes and the newest epoch of each kind of record. The full check then reads the
 * whole tree (tree-walk.ts).
 */

import {
  AkdError,
  NodeLabel,
  bytesEqual,
  isAkdError,
  toHex,
  type Configuration,
} from '@akd-ts/core';
import {
  AZKS_KEY,
  NodeType,
  nodeKey,
  type AzksRecord,
  type Database,
  type StoredRecordTotals,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { hasChildren } from './node-check.js';
import { checkChildrenOf, walkTree } from './tree-walk.js';

const ROOT = NodeLabel.root();
/** Epochs whose audit blob names one listing read asks for, by default. */
const DEFAULT_BLOB_CHUNK = 10_000;

/** How much of a stored directory to check. */
export interface StoredDirectoryCheckOptions {
  /**
   * The totals a scan of the store found (`SqliteDatabase.recordTotals()`): without them the
   * node count and the newest epochs of nodes, value states and audit blobs are not compared.
   */
  totals?: StoredRecordTotals;
  /** Also read and check every node of the tree (tree-walk.ts). Default false. */
  full?: boolean;
  /** Parents whose children one read of the full check fetches (default 2,000). */
  batch?: number;
  /** Epochs whose audit blob names one read asks for (default 10,000). */
  blobChunk?: number;
}

/** What a check of a stored directory found sound. */
export interface StoredDirectoryReport {
  /** The AZKS record's latest epoch, which the tree and the other records agree with. */
  latestEpoch: bigint;
  /** The published root hash at that epoch, from the stored root. */
  rootHash: Uint8Array;
  /** Audit blobs whose names were checked against the roots and each other. */
  auditBlobs: number;
  /** Nodes reached and checked by the full check (undefined without it). */
  treeNodes: bigint | undefined;
}

function corrupt(message: string): AkdError {
  return new AkdError('STORAGE_CORRUPT', message);
}

async function rootRecord(db: Database): Promise<TreeNodeRecord> {
  try {
    return await db.get(nodeKey(ROOT));
  } catch (e) {
    if (isAkdError(e, 'STORAGE_NOT_FOUND')) throw corrupt('the tree has no root node');
    throw e;
  }
}

/**
 * Checks the stored root against the AZKS record and its children.
 * @returns the published root hashes at the latest epoch and the one before (undefined at
 * epoch 0).
 */
async function checkRoot(
  config: Configuration,
  db: Database,
  azks: AzksRecord,
): Promise<{ current: Uint8Array; previous: Uint8Array | undefined }> {
  const latest = azks.latestEpoch;
  const record = await rootRecord(db);
  const root = record.latest;
  if (root.nodeType !== NodeType.Root) throw corrupt('the node at the root label is not a root');
  if (root.lastEpoch !== latest) {
    throw corrupt(
      `azks latest epoch ${latest} but the tree's root was last written in epoch ${root.lastEpoch}`,
    );
  }
  if (!hasChildren(root)) {
    if (latest !== 0n) throw corrupt(`azks latest epoch ${latest} but the tree is empty`);
    if (!bytesEqual(root.hash, config.emptyRootValue)) {
      throw corrupt('the root of the empty tree does not hold the empty-root value');
    }
  } else {
    await checkChildrenOf(config, db, [root], latest);
  }
  const current = config.computeRootHashFromVal(root.hash);
  if (latest === 0n) return { current, previous: undefined };
  const before = record.previous;
  if (before === undefined || before.lastEpoch !== latest - 1n) {
    throw corrupt(
      `the root keeps no version of epoch ${latest - 1n}` +
        (before === undefined ? '' : ` (its previous version is of epoch ${before.lastEpoch})`),
    );
  }
  return { current, previous: config.computeRootHashFromVal(before.hash) };
}

/** Compares the scan's totals with the AZKS record. */
function checkTotals(azks: AzksRecord, totals: StoredRecordTotals): void {
  const latest = azks.latestEpoch;
  if (totals.treeNodes !== azks.numNodes) {
    throw corrupt(
      `azks counts ${azks.numNodes} tree nodes but the store holds ${totals.treeNodes}`,
    );
  }
  if (totals.newestNodeEpoch !== latest) {
    throw corrupt(
      `azks latest epoch ${latest} but the newest tree node is of epoch ${totals.newestNodeEpoch}`,
    );
  }
  // epoch 0 has no value state; every later epoch writes some
  const newestState = totals.newestValueStateEpoch;
  if (latest === 0n ? newestState !== undefined : newestState !== latest) {
    throw corrupt(
      `azks latest epoch ${latest} but the newest value state is ` +
        (newestState === undefined ? 'none' : `of epoch ${newestState}`),
    );
  }
  // a publish stores its blob just before it commits: one blob past the latest epoch is a
  // publish that did not commit, and the next publish replaces it
  const newestBlob = totals.newestAuditBlobEpoch;
  if (newestBlob !== undefined && newestBlob > latest + 1n) {
    throw corrupt(`azks latest epoch ${latest} but an audit blob of epoch ${newestBlob} is stored`);
  }
}

/**
 * Checks the names of the stored audit blobs of epochs 1 to `latest + 1`: each continues the
 * one before it where both are stored, the latest epoch's runs between the roots the tree
 * holds, and one of a publish that did not commit starts at the latest root.
 * @returns how many blobs were checked.
 */
async function checkAuditBlobs(
  db: Database,
  latest: bigint,
  roots: { current: Uint8Array; previous: Uint8Array | undefined },
  chunk: number,
): Promise<number> {
  const hex = (h: Uint8Array) => toHex(h);
  let checked = 0;
  let before: { epoch: bigint; currentHash: Uint8Array } | undefined;
  for (let first = 1n; first <= latest + 1n; first += BigInt(chunk)) {
    const epochs: bigint[] = [];
    for (let e = first; e <= latest + 1n && e < first + BigInt(chunk); e++) epochs.push(e);
    for (const blob of await db.getAuditBlobInfos(epochs)) {
      const { epoch, previousHash, currentHash } = blob;
      if (before?.epoch === epoch - 1n && !bytesEqual(before.currentHash, previousHash)) {
        throw corrupt(
          `the audit blob of epoch ${epoch} starts at root ${hex(previousHash)} ` +
            `but the blob of epoch ${epoch - 1n} ends at ${hex(before.currentHash)}`,
        );
      }
      const expected =
        epoch === latest
          ? { start: roots.previous!, end: roots.current }
          : epoch === latest + 1n
            ? { start: roots.current, end: undefined }
            : undefined;
      if (expected !== undefined && !bytesEqual(previousHash, expected.start)) {
        throw corrupt(
          `the audit blob of epoch ${epoch} starts at root ${hex(previousHash)} ` +
            `but the tree's root at epoch ${epoch - 1n} is ${hex(expected.start)}`,
        );
      }
      if (expected?.end !== undefined && !bytesEqual(currentHash, expected.end)) {
        throw corrupt(
          `the audit blob of epoch ${epoch} ends at root ${hex(currentHash)} ` +
            `but the tree's root at that epoch is ${hex(expected.end)}`,
        );
      }
      before = { epoch, currentHash };
      checked++;
    }
  }
  return checked;
}

/**
 * Checks that a stored directory is consistent: the AZKS record's latest epoch is the epoch
 * the tree's root was last written in, the root's hash is the hash of its children, the root
 * keeps its version of the epoch before, the stored audit blobs chain from root to root and
 * end at the tree's root; with `totals`, that the AZKS record counts every stored node and
 * that no node, value state or audit blob is newer than its latest epoch (nor is the newest
 * value state older); with `full`, every node of the tree (node-check.ts), and that every
 * stored node is reachable from the root.
 *
 * It reads through `db` directly (no cache), and only reads.
 * @throws AkdError `STORAGE_CORRUPT` naming the first inconsistency found, or a storage
 * error from the reads.
 *
 * @example
 * ```ts
 * const totals = await sqlite.recordTotals();
 * const { latestEpoch } = await checkStoredDirectory(config, sqlite, { totals });
 * ```
 */
export async function checkStoredDirectory(
  config: Configuration,
  db: Database,
  options: StoredDirectoryCheckOptions = {},
): Promise<StoredDirectoryReport> {
  let azks: AzksRecord;
  try {
    azks = await db.get(AZKS_KEY);
  } catch (e) {
    if (isAkdError(e, 'STORAGE_NOT_FOUND')) throw corrupt('the store holds no azks record');
    throw e;
  }
  const latest = azks.latestEpoch;
  const roots = await checkRoot(config, db, azks);
  if (options.totals !== undefined) checkTotals(azks, options.totals);
  const auditBlobs = await checkAuditBlobs(
    db,
    latest,
    roots,
    options.blobChunk ?? DEFAULT_BLOB_CHUNK,
  );
  let treeNodes: bigint | undefined;
  if (options.full === true) {
    const root = (await rootRecord(db)).latest;
    treeNodes = await walkTree(config, db, root, latest, options.batch);
    if (treeNodes !== azks.numNodes) {
      throw corrupt(
        `azks counts ${azks.numNodes} tree nodes but ${treeNodes} are reachable from the root`,
      );
    }
  }
  return { latestEpoch: latest, rootHash: roots.current, auditBlobs, treeNodes };
}
