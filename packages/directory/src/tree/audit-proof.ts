/**
 * Append-only proof generation (spec 10.5): for each epoch step, the roots of the subtrees that
 * did not change and the leaves inserted in the step. Elements come in canonical left-to-right
 * order (spec 21 open question 2), which equals upstream with parallelism disabled.
 */

import {
  Direction,
  type AppendOnlyProof,
  type AzksElement,
  type Configuration,
  type NodeLabel,
  type SingleAppendOnlyProof,
} from '@akd-ts/core';
import { NodeType, type RecordReader, type TreeNode } from '@akd-ts/storage';
import { childLabel, nodeValue } from './nodes.js';
import { readChild, readRoot } from './node-io.js';

interface Collected {
  unchanged: AzksElement[];
  inserted: AzksElement[];
}

async function collect(
  config: Configuration,
  reader: RecordReader,
  node: TreeNode,
  start: bigint,
  end: bigint,
  latest: bigint,
  out: Collected,
): Promise<void> {
  if (node.lastEpoch <= start) {
    // the whole subtree existed unchanged at `start` (the root has no parent to prove it to)
    if (node.nodeType !== NodeType.Root)
      out.unchanged.push({ label: node.label, value: nodeValue(config, node) });
    return;
  }
  if (node.minDescendantEpoch > end) return; // created entirely after the step
  if (node.nodeType === NodeType.Leaf) {
    out.inserted.push({ label: node.label, value: node.hash });
    return;
  }
  for (const direction of [Direction.Left, Direction.Right]) {
    const label = childLabel(node, direction);
    if (label === undefined) continue;
    // the version the node was hashed with, which a cache kept across epochs may have replaced
    const recorded = direction === Direction.Left ? node.leftEpoch : node.rightEpoch;
    const version = await readChild(reader, label, latest, recorded);
    await collect(config, reader, version, start, end, latest, out);
  }
}

/** The proof of the single step `epoch -> epoch + 1`, read at the `latest` epoch. */
export async function singleAppendOnlyProof(
  config: Configuration,
  reader: RecordReader,
  root: NodeLabel,
  epoch: bigint,
  latest: bigint,
): Promise<SingleAppendOnlyProof> {
  const rootNode = await readRoot(reader, root, latest);
  const out: Collected = { unchanged: [], inserted: [] };
  await collect(config, reader, rootNode, epoch, epoch + 1n, latest, out);
  return { inserted: out.inserted, unchangedNodes: out.unchanged };
}

/**
 * Proofs of every step from `start` to `end` (spec 10.5): `epochs = [start, ..., end - 1]`.
 * The caller checks `start < end <= latest`.
 */
export async function appendOnlyProof(
  config: Configuration,
  reader: RecordReader,
  root: NodeLabel,
  start: bigint,
  end: bigint,
  latest: bigint,
): Promise<AppendOnlyProof> {
  const proof: AppendOnlyProof = { proofs: [], epochs: [] };
  for (let epoch = start; epoch < end; epoch++) {
    proof.proofs.push(await singleAppendOnlyProof(config, reader, root, epoch, latest));
    proof.epochs.push(epoch);
  }
  return proof;
}
