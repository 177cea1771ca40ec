/**
 * Preloading (spec 13): a breadth-first walk from the root that fetches, one batched read per
 * level, every node an operation is about to touch, so the operation itself then runs from the
 * cache. It never changes a result. With parallel levels, each level's frontier is cut in two
 * halves that continue as independent walks, so their batched reads are in flight together and
 * one half's decoding overlaps the other's wait.
 */

import { LEAF_LEN, compareBytes, type NodeLabel } from '@akd-ts/core';
import {
  NodeType,
  nodeAtEpoch,
  nodeKey,
  type RecordReader,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { childLevels } from '../parallelism.js';

export interface PreloadOptions {
  /** Parallel levels (spec 13.1), or undefined for one serial walk. */
  levels: number | undefined;
  /** Largest number of keys in one storage read; a bigger level is read in chunks. */
  maxBatchSize: number;
}

/** Decides which children of a loaded node the walk continues to. */
export type Expand = (node: TreeNode) => boolean;

/**
 * Reads `labels` in chunks of at most `maxBatchSize` keys: one after another in a serial walk,
 * all at once in a parallel one (their round trips then overlap).
 */
async function batchRead(
  reader: RecordReader,
  labels: NodeLabel[],
  maxBatchSize: number,
  parallel: boolean,
): Promise<TreeNodeRecord[]> {
  const chunks: NodeLabel[][] = [];
  for (let i = 0; i < labels.length; i += maxBatchSize)
    chunks.push(labels.slice(i, i + maxBatchSize));
  const read = (chunk: NodeLabel[]) =>
    reader.batchGet(chunk.map(nodeKey)) as Promise<TreeNodeRecord[]>;
  if (parallel) return (await Promise.all(chunks.map(read))).flat();
  const out: TreeNodeRecord[] = [];
  for (const chunk of chunks) out.push(...(await read(chunk)));
  return out;
}

async function walk(
  reader: RecordReader,
  labels: NodeLabel[],
  epoch: bigint,
  expand: Expand,
  levels: number | undefined,
  maxBatchSize: number,
): Promise<number> {
  if (labels.length === 0) return 0;
  const records = await batchRead(reader, labels, maxBatchSize, levels !== undefined);
  let count = labels.length;
  const next: NodeLabel[] = [];
  for (const record of records) {
    const node = nodeAtEpoch(record, epoch);
    if (node === undefined || !expand(node)) continue;
    if (node.leftChild !== undefined) next.push(node.leftChild);
    if (node.rightChild !== undefined) next.push(node.rightChild);
  }
  if (levels === undefined) {
    return count + (await walk(reader, next, epoch, expand, undefined, maxBatchSize));
  }
  const half = next.length >> 1;
  const sub = childLevels(levels);
  const [a, b] = await Promise.all([
    walk(reader, next.slice(0, half), epoch, expand, sub, maxBatchSize),
    walk(reader, next.slice(half), epoch, expand, sub, maxBatchSize),
  ]);
  count += a + b;
  return count;
}

/**
 * Walks from `root` at `epoch`, continuing below every node `expand` accepts.
 * @returns the number of node keys requested (spec 13.2 counts requested keys). 0 when the
 * reader has no cache, since there would be nothing to warm.
 */
export async function preload(
  reader: RecordReader,
  root: NodeLabel,
  epoch: bigint,
  expand: Expand,
  options: PreloadOptions,
): Promise<number> {
  if (!reader.hasCache()) return 0;
  return walk(reader, [root], epoch, expand, options.levels, Math.max(1, options.maxBatchSize));
}

/**
 * Answers "is some target below `prefix`?" for a sorted list of full-length labels (spec 13.2
 * `contains_prefix`): the labels under a prefix form one contiguous run starting at the first
 * label not below the prefix's zero-padded value.
 */
export function prefixIndex(sortedTargets: NodeLabel[]): (prefix: NodeLabel) => boolean {
  return (prefix) => {
    if (prefix.len === 0) return sortedTargets.length > 0;
    let lo = 0;
    let hi = sortedTargets.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBytes(sortedTargets[mid]!.val, prefix.val) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo < sortedTargets.length && prefix.isPrefixOf(sortedTargets[lo]!);
  };
}

/** Sorts and de-duplicates full-length target labels for `prefixIndex`. */
export function sortTargets(labels: NodeLabel[]): NodeLabel[] {
  const sorted = labels
    .filter((l) => l.len === LEAF_LEN)
    .sort((a, b) => compareBytes(a.val, b.val));
  return sorted.filter((l, i) => i === 0 || !l.equals(sorted[i - 1]!));
}

/** Expansion for insertion and proof paths: continue below nodes that prefix a target. */
export function towardTargets(targets: NodeLabel[]): Expand {
  const contains = prefixIndex(sortTargets(targets));
  return (node) => node.nodeType !== NodeType.Leaf && contains(node.label);
}

/** Expansion for audits over [start, end] (spec 13.4). */
export function auditExpansion(start: bigint, end: bigint): Expand {
  return (node) =>
    node.nodeType !== NodeType.Leaf && node.lastEpoch > start && node.minDescendantEpoch <= end;
}
