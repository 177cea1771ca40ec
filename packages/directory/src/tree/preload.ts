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
  type RecordReader,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { childLevels } from '../parallelism.js';
import { notAtRecordedEpoch } from './node-io.js';
import type { ReadPacing } from './read-pacing.js';
import type { VisitedNodes } from './visited-reader.js';

export interface PreloadOptions {
  /**
   * Parallel levels (spec 13.1), or undefined for one serial walk. With levels, an insertion's
   * preload still reads serially while its reads keep this thread busy rather than waiting
   * (read-pacing.ts); `splitAlways` makes it split regardless.
   */
  levels: number | undefined;
  /** Split the frontier within the parallel levels whatever the reads cost (default false). */
  splitAlways?: boolean;
  /** What judges the reads (default: a new ReadPacing on the event loop's clock; tests). */
  pacing?: ReadPacing;
  /** Largest number of keys in one storage read; a bigger level is read in chunks. */
  maxBatchSize: number;
  /**
   * An insertion's walk outside its parallel levels: where set, a level of more nodes than this
   * is cut in halves that continue one after the other, each down to the leaves before the
   * next begins. For a store with no round trips to save (`Database.readLatency` 'local'):
   * a part's reads span a narrow range of labels, and on SQLite they missed its page cache
   * half as often at 1M labels and a fifth less at 10M as a whole level's reads did
   * (bench/RESULTS.md). Default: a level at a time.
   */
  chunkNodes?: number;
  /** Filled in when given: how deep the walk went and how many batched reads it issued. */
  stats?: PreloadStats;
  /**
   * Filled in when given: every record the walk saw, by its label's key, for the walks that
   * follow a small preload (`VisitedReader`). A large preload leaves it out.
   */
  visited?: VisitedNodes;
  /**
   * The store keeps node versions (`Database.nodeLayout` 'versions'): an insertion's commit
   * writes the latest version of each node it rewrites and never a previous copy, so its
   * walk keeps no record bytes for those nodes (arena/load-bytes.ts). Default false.
   */
  storeKeepsVersions?: boolean;
  /**
   * Called after each batched read of an insertion's walk, between the walk's own work: where
   * given, it collects garbage when the heap has grown enough (release-memory.ts
   * `walkCollector`).
   */
  collectGarbage?: () => unknown;
}

export interface PreloadStats {
  /** Tree levels the walk read (the root's level counts). */
  levels: number;
  /** Batched reads issued. */
  reads: number;
  /** Nodes asked for (an insertion's preload fills it in). */
  nodes?: number;
  /** Frontiers cut in two halves (an insertion's preload fills it in). */
  splits?: number;
}

/** The least frontier worth cutting in two: below it the halves' reads are mostly overhead. */
export const MIN_SPLIT = 128;

/** Decides which children of a loaded node the walk continues to. */
export type Expand = (node: TreeNode) => boolean;

/**
 * The most chunk reads one call of a parallel walk keeps in flight. Their round trips overlap
 * up to this many; past it they would only queue for the store's connections, where a wait
 * longer than a connection timeout fails the read: a level of an epoch of 1,000,000 new labels
 * into 6,100,000 is a hundred chunks of 10,000 keys, which all at once waited more than the
 * 10 s a PostgreSQL pool of 10 connections gives a request, and failed the publish.
 */
export const MAX_CHUNK_READS_IN_FLIGHT = 4;

/**
 * Calls `read` on `items` in chunks of at most `maxBatchSize`: one after another in a serial
 * walk, up to {@link MAX_CHUNK_READS_IN_FLIGHT} at once in a parallel one (their round trips
 * then overlap). Counts the reads in `stats` and returns what each chunk's read returned, in
 * the chunks' order. After a read fails no other starts, and the call fails with the first
 * failure once the reads in flight have ended.
 */
export async function readInChunks<T, R>(
  items: readonly T[],
  maxBatchSize: number,
  parallel: boolean,
  stats: PreloadStats | undefined,
  read: (chunk: T[]) => Promise<R>,
): Promise<R[]> {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += maxBatchSize) {
    chunks.push(items.slice(i, i + maxBatchSize));
  }
  if (stats !== undefined) stats.reads += chunks.length;
  const out = new Array<R>(chunks.length);
  if (!parallel) {
    for (let i = 0; i < chunks.length; i++) out[i] = await read(chunks[i]!);
    return out;
  }
  let next = 0;
  let failure: { error: unknown } | undefined;
  const reader = async () => {
    while (failure === undefined && next < chunks.length) {
      const i = next++;
      try {
        out[i] = await read(chunks[i]!);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(MAX_CHUNK_READS_IN_FLIGHT, chunks.length) }, reader),
  );
  if (failure !== undefined) throw failure.error;
  return out;
}

/**
 * The committed records of `labels` (the root, or children whose parents the walk read),
 * each as the version its parent records for it (`Walk.recorded`): a store of versions has
 * no other way to find them. Read in chunks as `readInChunks` reads; what the store lacks is
 * absent. A label with no recorded epoch (a parent written before children's epochs were)
 * is read by label.
 */
async function readVersions(
  w: Walk,
  labels: NodeLabel[],
  parallel: boolean,
): Promise<(TreeNodeRecord | undefined)[]> {
  const named: number[] = [];
  const loose: number[] = [];
  for (let i = 0; i < labels.length; i++) {
    (w.recorded.has(labels[i]!.key) ? named : loose).push(i);
  }
  const found = new Array<TreeNodeRecord | undefined>(labels.length);
  const read = async (chunk: number[]) => {
    const records = await w.reader.readNodes(
      chunk.map((i) => labels[i]!),
      chunk.map((i) => w.recorded.get(labels[i]!.key)!),
    );
    chunk.forEach((i, j) => (found[i] = records[j]));
  };
  await readInChunks(named, w.maxBatchSize, parallel, w.stats, read);
  if (loose.length > 0) {
    const byLabel = await w.reader.readNodes(loose.map((i) => labels[i]!));
    loose.forEach((i, j) => (found[i] = byLabel[j]));
  }
  return found;
}

interface Walk {
  reader: RecordReader;
  epoch: bigint;
  expand: Expand;
  maxBatchSize: number;
  stats: PreloadStats | undefined;
  visited: VisitedNodes | undefined;
  /** The write epoch each child's parent records for it, by the child label's key. */
  recorded: Map<string, bigint>;
}

/**
 * Records `record` as seen and adds the children the walk continues to onto `next`, with the
 * write epochs `record` records for them. Its own recorded epoch was checked (`stale`) and is
 * let go: the map holds a frontier, not every node of a large audit's walk.
 */
function visit(w: Walk, record: TreeNodeRecord, next: NodeLabel[]): void {
  w.recorded.delete(record.label.key);
  w.visited?.set(record.label.key, record);
  const node = nodeAtEpoch(record, w.epoch);
  if (node === undefined || !w.expand(node)) return;
  if (node.leftChild !== undefined) {
    next.push(node.leftChild);
    if (node.leftEpoch !== undefined) w.recorded.set(node.leftChild.key, node.leftEpoch);
  }
  if (node.rightChild !== undefined) {
    next.push(node.rightChild);
    if (node.rightEpoch !== undefined) w.recorded.set(node.rightChild.key, node.rightEpoch);
  }
}

/**
 * Whether `record` lacks the version its parent records, read at the walk's epoch: a record
 * cached before a later epoch rewrote the node (a reader keeps its cache across epochs).
 */
function stale(w: Walk, record: TreeNodeRecord): boolean {
  const want = w.recorded.get(record.label.key);
  return want !== undefined && nodeAtEpoch(record, w.epoch)?.lastEpoch !== want;
}

/**
 * The records of `labels` as the store holds them now, bypassing the cache, which then keeps
 * them in place of the stale ones. A record still without the version its parent records
 * means the store no longer holds that version (the reader is two or more epochs behind the
 * writer) or is inconsistent: `STORAGE_NOT_FOUND`.
 */
async function readAgain(w: Walk, labels: NodeLabel[]): Promise<TreeNodeRecord[]> {
  const found = await readStored(w, labels);
  const fresh = found.filter((r): r is TreeNodeRecord => r !== undefined);
  for (let i = 0; i < labels.length; i++) {
    const record = found[i];
    if (record === undefined || stale(w, record)) {
      throw notAtRecordedEpoch(labels[i]!, w.epoch, w.recorded.get(labels[i]!.key)!, record);
    }
  }
  return fresh;
}

/**
 * The records of `labels` from the store, not the cache, aligned with them, in chunks as
 * `readInChunks` reads; the cache keeps them (in place of any stale ones).
 */
async function readStored(w: Walk, labels: NodeLabel[]): Promise<(TreeNodeRecord | undefined)[]> {
  const found = await readVersions(w, labels, false);
  w.reader.cacheNodes(found.filter((r): r is TreeNodeRecord => r !== undefined));
  return found;
}

/** Labels of one tree level, `depth` below the root. */
interface Level {
  labels: NodeLabel[];
  depth: number;
}

/**
 * The serial walk of a reader that reads subtrees (`RecordReader.readsSubtrees`) toward
 * `targets`: it goes as deep as the cache lets it, setting aside every node the cache lacks,
 * then reads the subtrees below all of those in one read and walks on through what came back.
 * A warm lookup whose paths leave the cache at different depths still makes one read. A node
 * the answer left out is read as any other; one the store lacks is absent, as in `walk`.
 */
async function walkSubtrees(w: Walk, root: NodeLabel, targets: NodeLabel[]): Promise<number> {
  const fetched = new Map<string, TreeNodeRecord>();
  let count = 0;
  // levels to walk, and whether their first level was counted already (set aside, then read)
  let pending: { level: Level; counted: boolean }[] = [
    { level: { labels: [root], depth: 0 }, counted: false },
  ];
  while (pending.length > 0) {
    const missing: Level[] = [];
    for (const { level, counted } of pending) {
      let { labels, depth } = level;
      let first = true;
      while (labels.length > 0) {
        if (w.stats !== undefined && depth + 1 > w.stats.levels) w.stats.levels = depth + 1;
        if (!(first && counted)) count += labels.length;
        first = false;
        // what was just read is fresher than the cache, which may hold a stale record; the
        // cache is asked only for the rest (a compact cache decodes every record it answers)
        const got = labels.map((l) => fetched.get(l.key));
        const cached = w.reader.peekNodes(
          fetched.size === 0 ? labels : labels.filter((_, i) => got[i] === undefined),
        );
        const next: NodeLabel[] = [];
        const lacking: NodeLabel[] = [];
        let c = 0;
        for (let i = 0; i < labels.length; i++) {
          const read = got[i];
          if (read !== undefined && stale(w, read)) {
            throw notAtRecordedEpoch(labels[i]!, w.epoch, w.recorded.get(read.label.key)!, read);
          }
          const peeked = read === undefined ? cached[c++] : undefined;
          const record = read ?? (peeked !== undefined && !stale(w, peeked) ? peeked : undefined);
          if (record !== undefined) visit(w, record, next);
          else lacking.push(labels[i]!);
        }
        if (lacking.length > 0) missing.push({ labels: lacking, depth });
        labels = next;
        depth++;
      }
    }
    if (missing.length === 0) break;
    const asked = missing.flatMap((m) => m.labels);
    if (w.stats !== undefined) w.stats.reads++;
    const epochs = asked.map((l) => w.recorded.get(l.key));
    const named = epochs.every((e) => e !== undefined) ? (epochs as bigint[]) : undefined;
    for (const r of await w.reader.readSubtrees(asked, targets, w.epoch, named)) {
      fetched.set(r.label.key, r);
    }
    const unanswered = asked.filter((label) => !fetched.has(label.key));
    if (unanswered.length > 0) {
      // from the store, not the cache: a node set aside as stale is asked again here
      for (const r of await readStored(w, unanswered))
        if (r !== undefined) fetched.set(r.label.key, r);
    }
    // walk on from the nodes now at hand; the others are not stored
    pending = missing.map((m) => ({
      level: { labels: m.labels.filter((l) => fetched.has(l.key)), depth: m.depth },
      counted: true,
    }));
  }
  return count;
}

async function walk(
  w: Walk,
  labels: NodeLabel[],
  levels: number | undefined,
  depth: number,
): Promise<number> {
  if (labels.length === 0) return 0;
  if (w.stats !== undefined && depth + 1 > w.stats.levels) w.stats.levels = depth + 1;
  // nodes already in the transaction log or the cache need no read (a warm cache, or paths
  // shared with an earlier preload); only the others are read, in batches
  const records: TreeNodeRecord[] = [];
  const missing: NodeLabel[] = [];
  const cached = w.reader.peekNodes(labels);
  for (let i = 0; i < labels.length; i++) {
    const record = cached[i];
    if (record !== undefined) records.push(record);
    else missing.push(labels[i]!);
  }
  if (missing.length > 0) {
    const found = await readVersions(w, missing, levels !== undefined);
    const kept: TreeNodeRecord[] = [];
    for (const r of found) if (r !== undefined) kept.push(r);
    w.reader.cacheNodes(kept);
    for (const r of kept) records.push(r);
  }
  let count = labels.length;
  const next: NodeLabel[] = [];
  const staleLabels: NodeLabel[] = [];
  for (const record of records) {
    if (stale(w, record)) staleLabels.push(record.label);
    else visit(w, record, next);
  }
  if (staleLabels.length > 0) for (const r of await readAgain(w, staleLabels)) visit(w, r, next);
  // a small frontier continues as one walk: two tiny reads cost more round trips than they save
  if (levels === undefined || next.length < MIN_SPLIT) {
    return count + (await walk(w, next, levels, depth + 1));
  }
  // cut the frontier in two halves that continue as independent walks
  const half = next.length >> 1;
  const sub = childLevels(levels);
  const [a, b] = await Promise.all([
    walk(w, next.slice(0, half), sub, depth + 1),
    walk(w, next.slice(half), sub, depth + 1),
  ]);
  count += a + b;
  return count;
}

/**
 * The most targets a serial walk reads subtrees for. A lookup has two or three, a history of a
 * few versions a dozen or so. The statement tests each row it reaches against every target,
 * so its work grows with the targets squared (rows grow with them too): a history of hundreds
 * of versions, or a batch of many labels, reads level by level in chunks, as a publish does,
 * where the prefix tests run here against the sorted targets.
 */
export const MAX_SUBTREE_TARGETS = 32;

/**
 * Walks from `root` at `epoch`, continuing below every node `expand` accepts. Given the
 * `targets` that `expand` walks toward, a serial walk on a reader that reads subtrees
 * (`RecordReader.readsSubtrees`) reads the rest of the paths below the first nodes it misses
 * in one read rather than one per level.
 * @returns the number of node keys requested (spec 13.2 counts requested keys). 0 when the
 * reader has no cache and no `visited` map is given, since there would be nothing to warm.
 */
export async function preload(
  reader: RecordReader,
  root: NodeLabel,
  epoch: bigint,
  expand: Expand,
  options: PreloadOptions,
  targets?: readonly NodeLabel[],
): Promise<number> {
  // without a cache the walk warms nothing, unless it fills a map for the walks after it
  if (!reader.hasCache() && options.visited === undefined) return 0;
  const w: Walk = {
    reader,
    epoch,
    expand,
    maxBatchSize: Math.max(1, options.maxBatchSize),
    stats: options.stats,
    visited: options.visited,
    // the root visible at a published epoch was written in it (a publish rewrites the root)
    recorded: new Map([[root.key, epoch]]),
  };
  const full = targets?.filter((t) => t.len === LEAF_LEN) ?? [];
  if (
    full.length > 0 &&
    full.length <= MAX_SUBTREE_TARGETS &&
    options.levels === undefined &&
    reader.readsSubtrees()
  ) {
    return walkSubtrees(w, root, full);
  }
  return walk(w, [root], options.levels, 0);
}

/** The first 6 bytes of a label as a number (exact below 2^53), for fast comparisons. */
function head(label: NodeLabel): number {
  const v = label.val;
  return ((((v[0]! * 256 + v[1]!) * 256 + v[2]!) * 256 + v[3]!) * 256 + v[4]!) * 256 + v[5]!;
}

/**
 * Answers "is some target below `prefix`?" for full-length target labels (spec 13.2
 * `contains_prefix`): the targets under a prefix form one contiguous run of the sorted targets,
 * starting at the first one not below the prefix's zero-padded value. The search compares the
 * first 6 bytes as numbers and looks at the rest only on a tie.
 */
export function prefixIndex(targets: NodeLabel[]): (prefix: NodeLabel) => boolean {
  const sorted = sortTargets(targets);
  const heads = sorted.map(head);
  return (prefix) => {
    if (prefix.len === 0) return sorted.length > 0;
    const h = head(prefix);
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = heads[mid]!;
      if (m < h || (m === h && compareBytes(sorted[mid]!.val, prefix.val) < 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo < sorted.length && prefix.isPrefixOf(sorted[lo]!);
  };
}

/**
 * The full-length targets in byte order. Insertion passes its elements already sorted, so a
 * linear check spares it the sort; otherwise the labels' keys sort natively (for full-length
 * labels they order like the bytes).
 */
function sortTargets(labels: NodeLabel[]): NodeLabel[] {
  const full = labels.filter((l) => l.len === LEAF_LEN);
  for (let i = 1; i < full.length; i++) {
    if (compareBytes(full[i - 1]!.val, full[i]!.val) > 0) {
      return full.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    }
  }
  return full;
}

/** Expansion for insertion and proof paths: continue below nodes that prefix a target. */
export function towardTargets(targets: NodeLabel[]): Expand {
  const contains = prefixIndex(targets);
  return (node) => node.nodeType !== NodeType.Leaf && contains(node.label);
}

/** Expansion for audits over [start, end] (spec 13.4). */
export function auditExpansion(start: bigint, end: bigint): Expand {
  return (node) =>
    node.nodeType !== NodeType.Leaf && node.lastEpoch > start && node.minDescendantEpoch <= end;
}
