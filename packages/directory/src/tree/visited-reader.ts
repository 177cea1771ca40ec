/**
 * A reader that answers tree-node peeks from the records a preload has just visited before it
 * asks the reader underneath. A lookup's walks (spec 10.1, 10.2) then find each node in a map
 * of a few dozen entries rather than in the storage manager's cache, which on a proof server
 * holds hundreds of thousands: about 160 cache probes a lookup, each a miss of the processor's
 * caches, were an eighth of a lookup's time on SQLite. Everything else goes to the reader.
 */

import type { NodeLabel } from '@akd-ts/core';
import type {
  DbRecord,
  NodeRecordBytes,
  RecordFor,
  RecordReader,
  StorageKey,
  TreeNodeRecord,
} from '@akd-ts/storage';

/** Records by their label's key (`NodeLabel.key`), as a preload fills it (`PreloadOptions.visited`). */
export type VisitedNodes = Map<string, TreeNodeRecord>;

export class VisitedReader implements RecordReader {
  constructor(
    private readonly reader: RecordReader,
    private readonly visited: VisitedNodes,
  ) {}

  peekNode(label: NodeLabel): TreeNodeRecord | undefined {
    return this.visited.get(label.key) ?? this.reader.peekNode(label);
  }

  peekNodes(labels: readonly NodeLabel[]): (TreeNodeRecord | undefined)[] {
    return labels.map((label) => this.peekNode(label));
  }

  get<K extends StorageKey>(key: K): Promise<RecordFor<K>> {
    return this.reader.get(key);
  }

  batchGet(keys: StorageKey[]): Promise<DbRecord[]> {
    return this.reader.batchGet(keys);
  }

  getFromCacheOnly(key: StorageKey): DbRecord | undefined {
    return this.reader.getFromCacheOnly(key);
  }

  readNodes(
    labels: readonly NodeLabel[],
    epochs?: readonly bigint[],
  ): Promise<(TreeNodeRecord | undefined)[]> {
    return this.reader.readNodes(labels, epochs);
  }

  cacheNodes(records: readonly TreeNodeRecord[]): void {
    this.reader.cacheNodes(records);
  }

  hasCache(): boolean {
    return this.reader.hasCache();
  }

  readsNodeBytes(): boolean {
    return this.reader.readsNodeBytes();
  }

  readsSubtrees(): boolean {
    return this.reader.readsSubtrees();
  }

  readSubtrees(
    labels: readonly NodeLabel[],
    targets: readonly NodeLabel[],
    epoch: bigint,
    epochs?: readonly bigint[],
  ): Promise<TreeNodeRecord[]> {
    return this.reader.readSubtrees(labels, targets, epoch, epochs);
  }

  readNodeBytes(labels: Uint8Array, epochs?: BigUint64Array): Promise<NodeRecordBytes> {
    return this.reader.readNodeBytes(labels, epochs);
  }

  mayHoldNodes(): boolean {
    return this.visited.size > 0 || this.reader.mayHoldNodes();
  }
}
