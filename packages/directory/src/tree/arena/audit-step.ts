/**
 * The append-only proof of the step an arena insertion just made (spec 10.5), read from the
 * arena itself: every node the step changed is a slot, and so is each unchanged sibling its
 * rehash read (load.ts), which are exactly the nodes the proof lists. The walk is that of
 * `singleAppendOnlyProof` (tree/audit-proof.ts), depth first and left to right, over slot
 * indices instead of records read back through the transaction, and the elements go straight
 * from the slots into the blob's bytes (spec 16), with no object or copy per element (only
 * the unchanged nodes' values, which a leaf computes from its hash and epoch).
 *
 * Where the arena cannot answer as the records would (a child the insertion did not load, or
 * one without a version at the step's epoch: only in a tree that is already inconsistent),
 * it gives up and the caller takes the record walk, which reports such trees.
 */

import { encodeSingleAppendOnlyProofInPlace, type TreeHasher } from '@akd-ts/core';
import { NodeType } from '@akd-ts/storage';
import { NONE, type NodeArena } from './arena.js';

/**
 * The encoded `SingleAppendOnlyProof` of the step `epoch - 1 -> epoch` of a tree whose root
 * is slot 0 of `arena` after an insertion at `epoch`, or undefined when the arena does not
 * hold every node the proof reads.
 *
 * @example const data = arenaStepProof(arena, hasher, 7); // the blob of epoch 7
 */
export function arenaStepProof(
  arena: NodeArena,
  hasher: TreeHasher,
  epoch: number,
): Uint8Array | undefined {
  const a = arena;
  const start = epoch - 1;
  const inserted: number[] = [];
  const unchanged: number[] = [];
  // depth first, left before right: a stack popped right child last pushed
  const stack: number[] = [0];
  while (stack.length > 0) {
    const slot = stack.pop()!;
    if (a.types[slot] === 0) return undefined;
    if (a.lastEpoch[slot]! <= start) {
      // unchanged since the step's start (the root has no parent to prove it to)
      if (a.types[slot] !== NodeType.Root) unchanged.push(slot);
      continue;
    }
    if (a.minEpoch[slot]! > epoch) continue;
    if (a.types[slot] === NodeType.Leaf) {
      inserted.push(slot);
      continue;
    }
    const left = a.left[slot]!;
    const right = a.right[slot]!;
    // NONE is no child; any other negative index is one the insertion did not load
    if ((left < 0 && left !== NONE) || (right < 0 && right !== NONE)) return undefined;
    if (right !== NONE) stack.push(right);
    if (left !== NONE) stack.push(left);
  }
  // labels are read in the arena's slots; so are the inserted leaves' values, their hashes
  const leaves = Int32Array.from(inserted);
  const roots = Int32Array.from(unchanged);
  const values = new Uint8Array(32 * roots.length);
  roots.forEach((slot, i) => {
    // spec 7.3 node_value: a leaf's hash bound to its epoch, any other node's stored hash
    if (a.types[slot] === NodeType.Leaf) {
      hasher.leafValue(a.hashes, 32 * slot, a.lastEpoch[slot]!, values, 32 * i);
    } else values.set(a.hashes.subarray(32 * slot, 32 * slot + 32), 32 * i);
  });
  const { labels, lens, hashes } = a;
  return encodeSingleAppendOnlyProofInPlace(
    { count: leaves.length, labels, lens, labelAt: leaves, values: hashes, valueAt: leaves },
    { count: roots.length, labels, lens, labelAt: roots, values },
  );
}
