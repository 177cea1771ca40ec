/**
 * Record copies for stores that keep records as objects (the in-memory database, the cache):
 * callers may build new records from ones they read, so a store hands out and keeps its own
 * copies. Labels and byte arrays are immutable by convention and are shared.
 */

import type { DbRecord, TreeNode } from './records.js';

function copyNode(node: TreeNode): TreeNode {
  return { ...node };
}

/** A copy of `record` whose mutable parts are not shared with it. */
export function copyRecord<R extends DbRecord>(record: R): R {
  if (record.kind !== 'treeNode') return { ...record };
  return {
    ...record,
    latest: copyNode(record.latest),
    previous: record.previous === undefined ? undefined : copyNode(record.previous),
  };
}
