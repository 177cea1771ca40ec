/**
 * What several benchmarks share: the median of samples, a row printer (text or JSON lines),
 * and storage records shaped like a tree's, for the driver benchmarks.
 */

import { randomBytes } from 'node:crypto';
import { NodeLabel } from '@akd-ts/core';
import { NodeType, type TreeNode, type TreeNodeRecord } from '@akd-ts/storage';

/** The word after `--name` in `args` (a benchmark's option), or undefined when absent. */
export function optionValue(args: readonly string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

/** The median of samples (the upper one of an even count). */
export function median(xs: number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

/** Prints a result row: one JSON object a line with `json`, else `key: value` pairs. */
export function reportRow(row: Record<string, string | number>, json: boolean): void {
  if (json) console.log(JSON.stringify(row));
  else {
    console.log(
      Object.entries(row)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', '),
    );
  }
}

export function randomLabel(): NodeLabel {
  return new NodeLabel(randomBytes(32), 256);
}

/** A leaf-like node record; every other one with a previous copy, as after an update. */
export function nodeRecord(label: NodeLabel, i: number): TreeNodeRecord {
  const latest: TreeNode = {
    label,
    lastEpoch: 2n,
    minDescendantEpoch: 2n,
    parent: label.getPrefix(17),
    nodeType: i % 3 === 0 ? NodeType.Interior : NodeType.Leaf,
    leftChild: i % 3 === 0 ? label.getPrefix(200) : undefined,
    rightChild: i % 3 === 0 ? randomLabel() : undefined,
    leftEpoch: i % 3 === 0 ? 2n : undefined,
    rightEpoch: i % 3 === 0 ? 1n : undefined,
    hash: randomBytes(32),
  };
  const previous = i % 2 === 0 ? { ...latest, lastEpoch: 1n, hash: randomBytes(32) } : undefined;
  return { kind: 'treeNode', label, latest, previous };
}

/** `n` node records at random labels. */
export function nodeRecords(n: number): TreeNodeRecord[] {
  return Array.from({ length: n }, (_, i) => nodeRecord(randomLabel(), i));
}
