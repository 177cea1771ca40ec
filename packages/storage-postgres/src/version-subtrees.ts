/**
 * `batchGetSubtrees` on the versions layout, from named versions: the versions asked for and,
 * below them, each child by the write epoch its parent records, in one recursive statement
 * (version-sql.ts `versionSubtreesSql`). The walks of concurrent lookups at the same epoch
 * share one statement (coalescer.ts): their starts and targets are joined, and each walk is
 * answered what a statement of its own would have read, its walk made again over the joined
 * answer (`ownWalk`), so that no walk is given a version of another's tree. Walks join by
 * epoch: the walks of one epoch share their upper nodes, those of two (a reader across a
 * publish) share fewer, and a statement's work grows with its targets.
 */

import { LEAF_LEN, type NodeLabel } from '@akd-ts/core';
import { NodeType, type TreeNode, type TreeNodeRecord } from '@akd-ts/storage';
import type { PgQuery, PgRow } from './client.js';
import { Coalescer } from './coalescer.js';
import { byteaArray } from './array-literal.js';
import { decodeJoinedVersions } from './version-codec.js';
import { askValues, refusedState, versionId, type VersionAsk } from './version-reads.js';

/**
 * The most targets of one joined statement. The statement tests each version it reaches
 * against every target, so its work grows with their product: a lookup brings two or three,
 * a history a dozen or so; a walk with more goes alone.
 */
export const MAX_JOINED_TARGETS = 32;

/** One walk's read: its start versions and its full-length targets. */
interface SubtreeCall {
  asks: VersionAsk[];
  targets: NodeLabel[];
}

/** What the reads need of the driver. */
export interface SubtreeStatements {
  /** The statement (its text and name; values are added). */
  statement: PgQuery;
  /** The table's name as errors show it. */
  table: string;
  /** Runs a read, its errors mapped (`PostgresDatabase.#query`). */
  query(query: PgQuery, operation: string): Promise<PgRow[]>;
  /** The versions `asks` names, by `versionId`: a walk's starts alone, where it cannot run. */
  versions(asks: readonly VersionAsk[]): Promise<Map<string, TreeNode>>;
}

const record = (label: NodeLabel, node: TreeNode): TreeNodeRecord => ({
  kind: 'treeNode',
  label,
  latest: node,
  previous: undefined,
});

/**
 * The versions of `found` that the statement's walk from `call`'s starts reaches (the rule of
 * `versionSubtreesSql`, made again over the answer): its starts, and below each that is not a
 * leaf and prefixes one of its targets, both children by the epochs it records.
 */
function ownWalk(
  call: SubtreeCall,
  found: ReadonlyMap<string, TreeNode>,
  byLabel: ReadonlyMap<string, TreeNode>,
): TreeNodeRecord[] {
  const out: TreeNodeRecord[] = [];
  const seen = new Set<TreeNode>();
  const queue: TreeNode[] = [];
  const reach = (n: TreeNode | undefined) => {
    if (n === undefined || seen.has(n)) return;
    seen.add(n);
    queue.push(n);
  };
  for (const a of call.asks) reach(found.get(versionId(a.epoch, a.key)));
  for (let i = 0; i < queue.length; i++) {
    const n = queue[i]!;
    out.push(record(n.label, n));
    if (n.nodeType === NodeType.Leaf || !call.targets.some((t) => n.label.isPrefixOf(t))) continue;
    if (n.leftChild !== undefined) reach(byLabel.get(`${n.leftEpoch}:${n.leftChild.key}`));
    if (n.rightChild !== undefined) reach(byLabel.get(`${n.rightEpoch}:${n.rightChild.key}`));
  }
  return out;
}

export class VersionSubtrees {
  /** Set when the server refused the statement's SQL (a compatible database lacking a function). */
  #unfit = false;
  readonly #joined = new Coalescer<SubtreeCall, TreeNodeRecord[]>(
    (calls) => this.#read(calls),
    (call) => call.targets.length,
    MAX_JOINED_TARGETS,
  );

  constructor(private readonly s: SubtreeStatements) {}

  /**
   * The records of the versions `asks` names and of the versions below them toward `targets`
   * at `epoch`. Without `join`, one statement of this walk alone (a walk that began with
   * reads by label, whose records are not versions by name).
   */
  async read(
    asks: VersionAsk[],
    targets: readonly NodeLabel[],
    epoch: bigint,
    join = true,
  ): Promise<TreeNodeRecord[]> {
    if (asks.length === 0) return [];
    const call = { asks, targets: targets.filter((t) => t.len === LEAF_LEN) };
    if (this.#unfit) return this.#starts(asks);
    if (!join) return (await this.#read([call]))[0]!;
    return this.#joined.call(String(epoch), call);
  }

  /** The start versions alone, for a server that cannot run the statement. */
  async #starts(asks: readonly VersionAsk[]): Promise<TreeNodeRecord[]> {
    const found = await this.s.versions(asks);
    return asks.flatMap((a) => {
      const n = found.get(versionId(a.epoch, a.key));
      return n === undefined ? [] : [record(a.label, n)];
    });
  }

  /** One statement for `calls`, each answered its own versions (module comment). */
  async #read(calls: readonly SubtreeCall[]): Promise<TreeNodeRecord[][]> {
    const asks = new Map<string, VersionAsk>();
    const targets = new Map<string, NodeLabel>();
    for (const c of calls) {
      for (const a of c.asks) asks.set(versionId(a.epoch, a.key), a);
      for (const t of c.targets) targets.set(t.key, t);
    }
    const [epochList, keyList] = askValues([...asks.values()]);
    const values = [keyList, epochList, byteaArray([...targets.values()].map((t) => t.val))];
    let rows: PgRow[];
    try {
      rows = await this.s.query(
        { ...this.s.statement, values },
        `reading the subtrees below ${asks.size} tree-node versions`,
      );
    } catch (e) {
      const state = refusedState(e);
      if (state === undefined) throw e;
      if (state === '42') this.#unfit = true;
      return Promise.all(calls.map((c) => this.#starts(c.asks)));
    }
    const found = new Map<string, TreeNode>();
    for (const { key, node } of decodeJoinedVersions(rows[0]?.recs, this.s.table)) {
      // a damaged store's links may reach a version twice: each is answered once
      found.set(versionId(node.lastEpoch, key), node);
    }
    if (calls.length === 1) return [[...found.values()].map((n) => record(n.label, n))];
    const byLabel = new Map<string, TreeNode>();
    for (const n of found.values()) byLabel.set(`${n.lastEpoch}:${n.label.key}`, n);
    return calls.map((c) => ownWalk(c, found, byLabel));
  }
}
