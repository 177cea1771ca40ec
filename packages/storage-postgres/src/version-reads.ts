/**
 * Reads of the `versions` layout (NodeLayout in @akd-ts/storage): by version, a primary-key
 * probe per (epoch, label); by label, a walk from the root of the store's epoch (the layout's
 * rule 4), which the server makes in one recursive statement (version-sql.ts). Where the
 * server cannot make it (a blob that does not frame, a compatible database without one of
 * its functions), the walk is made here a level at a time from the rows, whose decoder names
 * what is wrong.
 */

import { AkdError, NodeLabel } from '@akd-ts/core';
import { NodeType, type TreeNode, type TreeNodeRecord } from '@akd-ts/storage';
import { ArrayLiteral } from './array-literal.js';
import type { PgQuery, PgQueryable, PgRow } from './client.js';
import { MAX_STORED, hex } from './codec.js';
import type { Statements } from './queries.js';
import { decodeVersionRow, versionKey } from './version-codec.js';
import { ROOT_KEY } from './version-sql.js';

/** A version asked for: its label (and key) and write epoch. */
export interface VersionAsk {
  label: NodeLabel;
  key: Uint8Array;
  epoch: bigint;
}

/** The map key of a version: its epoch and key. */
export const versionId = (epoch: bigint | string, key: Uint8Array) => `${epoch}:${hex(key)}`;

/** Whether `e` is the server refusing a statement for the data (class 22) or the SQL (42). */
export function refusedState(e: unknown): '22' | '42' | undefined {
  const state =
    e instanceof AkdError ? (e.cause as { code?: unknown } | undefined)?.code : undefined;
  if (typeof state !== 'string') return undefined;
  const cls = state.slice(0, 2);
  return cls === '22' || cls === '42' ? cls : undefined;
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The epoch and key arrays of a statement over `asks`. */
export function askValues(asks: readonly VersionAsk[]): [string, string] {
  const epochs = new ArrayLiteral(asks.length * 4);
  const keys = new ArrayLiteral(asks.length * 24);
  for (const a of asks) {
    epochs.int(a.epoch);
    keys.bytes(a.key);
  }
  return [epochs.toString(), keys.toString()];
}

/** Runs statements one after another on `q` (a snapshot's connection, or the pool). */
async function run(q: PgQueryable, queries: PgQuery[]): Promise<PgRow[][]> {
  const out: PgRow[][] = [];
  for (const query of queries) out.push((await q.query(query)).rows);
  return out;
}

export class VersionReads {
  constructor(
    private readonly sql: Statements,
    private readonly chunkSize: number,
  ) {}

  private get table(): string {
    return this.sql.display.nodeVersions;
  }

  /** The versions `asks` names (epochs up to 2^63 - 1), by `versionId`. */
  async versions(q: PgQueryable, asks: readonly VersionAsk[]): Promise<Map<string, TreeNode>> {
    const wanted = new Map<string, VersionAsk>();
    for (const a of asks) if (a.epoch <= MAX_STORED) wanted.set(versionId(a.epoch, a.key), a);
    const queries = chunks([...wanted.values()], this.chunkSize).map((chunk) => ({
      ...this.sql.versionBatch,
      values: askValues(chunk),
    }));
    const found = new Map<string, TreeNode>();
    for (const rows of await run(q, queries)) {
      for (const row of rows) {
        const node = decodeVersionRow(row, this.table);
        found.set(versionId(node.lastEpoch, row.label as Uint8Array), node);
      }
    }
    return found;
  }

  /**
   * The versions that walks from the roots visible at `at` reach at each label: for each
   * pair, by `versionId(at, key)`. `inSql` false makes the walk here, from rows.
   */
  async walk(
    q: PgQueryable,
    pairs: readonly VersionAsk[],
    inSql: boolean,
  ): Promise<Map<string, TreeNode>> {
    const found = new Map<string, TreeNode>();
    if (!inSql) return this.walkLevels(q, pairs);
    const queries = chunks([...pairs], this.chunkSize).map((chunk) => ({
      ...this.sql.labelWalk,
      values: askValues(chunk),
    }));
    for (const rows of await run(q, queries)) {
      for (const row of rows) {
        const node = decodeVersionRow(row, this.table);
        found.set(versionId(String(row.at), row.label as Uint8Array), node);
      }
    }
    return found;
  }

  /** `walk` a level at a time: a statement per level of the tree, every row decoded here. */
  private async walkLevels(
    q: PgQueryable,
    pairs: readonly VersionAsk[],
  ): Promise<Map<string, TreeNode>> {
    const found = new Map<string, TreeNode>();
    const ats = [...new Set(pairs.map((p) => p.epoch))];
    if (ats.length === 0) return found;
    const list = new ArrayLiteral(ats.length * 4);
    for (const at of ats) list.int(at);
    const { rows } = await q.query({
      text:
        `SELECT t.at::text AS at, (SELECT max(r.epoch) FROM ${this.sql.tables.nodeVersions} r ` +
        `WHERE r.label = ${ROOT_KEY} AND r.epoch <= t.at)::text AS root ` +
        `FROM unnest($1::int8[]) AS t(at)`,
      values: [list.toString()],
    });
    const rootOf = new Map(rows.map((r) => [String(r.at), r.root as string | null]));
    type Step = { ask: VersionAsk; targets: VersionAsk[] };
    let frontier = new Map<string, Step>();
    const root = NodeLabel.root();
    const rootKey = versionKey(root);
    for (const p of pairs) {
      const epoch = rootOf.get(String(p.epoch));
      if (epoch === null || epoch === undefined) continue;
      const ask = { label: root, key: rootKey, epoch: BigInt(epoch) };
      const id = versionId(ask.epoch, rootKey);
      const step = frontier.get(id) ?? { ask, targets: [] };
      step.targets.push(p);
      frontier.set(id, step);
    }
    for (let depth = 0; frontier.size > 0 && depth <= 257; depth++) {
      const nodes = await this.versions(
        q,
        [...frontier.values()].map((s) => s.ask),
      );
      const next = new Map<string, Step>();
      for (const [id, step] of frontier) {
        const node = nodes.get(id);
        if (node === undefined) continue;
        for (const t of step.targets) {
          if (node.label.equals(t.label)) {
            found.set(versionId(t.epoch, t.key), node);
            continue;
          }
          if (node.nodeType === NodeType.Leaf) continue;
          for (const [child, epoch] of [
            [node.leftChild, node.leftEpoch],
            [node.rightChild, node.rightEpoch],
          ] as const) {
            if (child === undefined || epoch === undefined || !child.isPrefixOf(t.label)) continue;
            const key = versionKey(child);
            const childId = versionId(epoch, key);
            const s = next.get(childId) ?? { ask: { label: child, key, epoch }, targets: [] };
            s.targets.push(t);
            next.set(childId, s);
          }
        }
      }
      frontier = next;
    }
    return found;
  }

  /**
   * Reads by label (rule 4): the record of each label in the tree at the store's epoch,
   * `latest` the version a walk from its root reaches and `previous` the version a walk from
   * the root visible at `latest.lastEpoch - 1` reaches, by `label.key`.
   */
  async byLabel(
    q: PgQueryable,
    labels: readonly NodeLabel[],
    inSql: boolean,
  ): Promise<Map<string, TreeNodeRecord>> {
    const distinct = [...new Map(labels.map((l) => [l.key, l])).values()];
    const asks = distinct.map((label) => ({ label, key: versionKey(label), epoch: MAX_STORED }));
    const latest = await this.walk(q, asks, inSql);
    const before: VersionAsk[] = [];
    for (const a of asks) {
      const node = latest.get(versionId(a.epoch, a.key));
      if (node !== undefined && node.lastEpoch > 0n) {
        before.push({ ...a, epoch: node.lastEpoch - 1n });
      }
    }
    const previous = before.length === 0 ? new Map() : await this.walk(q, before, inSql);
    const out = new Map<string, TreeNodeRecord>();
    for (const a of asks) {
      const node = latest.get(versionId(a.epoch, a.key));
      if (node === undefined) continue;
      const prior = previous.get(versionId(node.lastEpoch - 1n, a.key));
      out.set(a.label.key, { kind: 'treeNode', label: a.label, latest: node, previous: prior });
    }
    return out;
  }
}
