/**
 * Loads upstream's fixture files (test/vectors/upstream/fixture-*.yaml, spec 17.2): every
 * storage record of a directory at two epochs and the update between them. The records use
 * serde's YAML form (spec 14.7): tagged enums, uppercase hex, `null` for absent options.
 */

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { NodeLabel, fromHex } from '@akd-ts/core';
import {
  keyOf,
  nodeAtEpoch,
  recordFullKey,
  type Database,
  type DbRecord,
  type NodeType,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { assertRecordEqual } from '@akd-ts/storage/conformance';
import { parseAllDocuments } from 'yaml';
import { VECTOR_DIR, type VectorConfig } from './vectors.js';

type Raw = Record<string, unknown>;

export interface Fixture {
  configuration: VectorConfig;
  state9: DbRecord[];
  delta10: { label: Uint8Array; value: Uint8Array }[];
  state10: DbRecord[];
}

const NODE_TYPES: Record<string, NodeType> = { Leaf: 1, Root: 2, Interior: 3 };

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new TypeError(`fixture: ${what} is not a scalar`);
  return v;
}

function label(v: unknown): NodeLabel {
  const r = v as Raw;
  return new NodeLabel(
    fromHex(str(r.label_val, 'label_val')),
    Number(str(r.label_len, 'label_len')),
  );
}

function optLabel(v: unknown): NodeLabel | undefined {
  return v === 'null' || v === null || v === undefined ? undefined : label(v);
}

function node(v: unknown): TreeNode | undefined {
  if (v === 'null' || v === null || v === undefined) return undefined;
  const r = v as Raw;
  return {
    label: label(r.label),
    lastEpoch: BigInt(str(r.last_epoch, 'last_epoch')),
    minDescendantEpoch: BigInt(str(r.min_descendant_epoch, 'min_descendant_epoch')),
    parent: label(r.parent),
    nodeType: NODE_TYPES[str(r.node_type, 'node_type')] ?? 1,
    leftChild: optLabel(r.left_child),
    rightChild: optLabel(r.right_child),
    // upstream keeps no child write epochs: withChildEpochs fills them in
    leftEpoch: undefined,
    rightEpoch: undefined,
    hash: fromHex(str(r.hash, 'hash')),
  };
}

function record(raw: Raw): DbRecord {
  switch (raw.kind) {
    case 'Azks':
      return {
        kind: 'azks',
        latestEpoch: BigInt(str(raw.latest_epoch, 'latest_epoch')),
        numNodes: BigInt(str(raw.num_nodes, 'num_nodes')),
      };
    case 'TreeNode':
      return {
        kind: 'treeNode',
        label: label(raw.label),
        latest: node(raw.latest_node)!,
        previous: node(raw.previous_node),
      };
    case 'ValueState':
      return {
        kind: 'valueState',
        value: fromHex(str(raw.value, 'value')),
        version: BigInt(str(raw.version, 'version')),
        label: label(raw.label),
        epoch: BigInt(str(raw.epoch, 'epoch')),
        username: fromHex(str(raw.username, 'username')),
      };
    default:
      throw new TypeError(`fixture: unknown record kind ${String(raw.kind)}`);
  }
}

/**
 * The records with each node version's child write epochs (`TreeNode.leftEpoch`) filled in as
 * a store's migration fills them: the `lastEpoch` of the child's version visible at the
 * version's own `lastEpoch`.
 */
export function withChildEpochs(records: DbRecord[]): DbRecord[] {
  const nodes = new Map<string, TreeNodeRecord>();
  for (const r of records) if (r.kind === 'treeNode') nodes.set(r.label.key, r);
  const epochOf = (child: NodeLabel | undefined, at: bigint) => {
    const stored = child === undefined ? undefined : nodes.get(child.key);
    return stored === undefined ? undefined : nodeAtEpoch(stored, at)?.lastEpoch;
  };
  const fill = (n: TreeNode | undefined): TreeNode | undefined =>
    n && {
      ...n,
      leftEpoch: epochOf(n.leftChild, n.lastEpoch),
      rightEpoch: epochOf(n.rightChild, n.lastEpoch),
    };
  return records.map((r) =>
    r.kind === 'treeNode' ? { ...r, latest: fill(r.latest)!, previous: fill(r.previous) } : r,
  );
}

/** Parses `fixture-<config>.yaml`. Every scalar is read as a string (hex must never become a number). */
export function loadFixture(configuration: VectorConfig): Fixture {
  const text = readFileSync(`${VECTOR_DIR}fixture-${configuration}.yaml`, 'utf8')
    // serde's externally tagged enums: turn "- !Kind" into a plain field
    .replace(/^- !(\w+)$/gm, '- kind: $1');
  const docs = parseAllDocuments(text, { schema: 'failsafe' }).map((d) => d.toJS() as Raw);
  const find = (epoch: string, field: string) => {
    const doc = docs.find((d) => d.epoch === epoch && field in d);
    if (doc === undefined) throw new Error(`fixture: no ${field} document for epoch ${epoch}`);
    return doc[field] as unknown[];
  };
  return {
    configuration,
    state9: withChildEpochs((find('9', 'records') as Raw[]).map(record)),
    delta10: (find('10', 'updates') as string[][]).map(([l, v]) => ({
      label: fromHex(l!),
      value: fromHex(v!),
    })),
    state10: withChildEpochs((find('10', 'records') as Raw[]).map(record)),
  };
}

/**
 * `records` as a store of `db`'s layout is written them by a migration from records: for a
 * store of versions (database.ts `NodeLayout`), each node's previous copy also as a version
 * of its own, which the layout's writes would leave out (rule 1).
 */
export function asStored(db: Database, records: DbRecord[]): DbRecord[] {
  if (db.nodeLayout !== 'versions') return records;
  const previous: DbRecord[] = [];
  for (const r of records) {
    if (r.kind === 'treeNode' && r.previous !== undefined) {
      previous.push({ ...r, latest: r.previous, previous: undefined });
    }
  }
  return [...previous, ...records];
}

/**
 * Asserts `db` holds every record of `expected`, field by field. A store of versions is read
 * by version: each copy by its write epoch, with the parent it was written with, which is the
 * expected parent or one above it (a later epoch put a node between them: rule 2).
 */
export async function assertStoresRecords(db: Database, expected: DbRecord[]): Promise<void> {
  const versions = db.nodeLayout === 'versions';
  const byLabel = expected.filter((r) => !versions || r.kind !== 'treeNode');
  const actual = new Map((await db.batchGet(byLabel.map(keyOf))).map((r) => [recordFullKey(r), r]));
  for (const want of byLabel) {
    const got = actual.get(recordFullKey(want));
    assert.ok(got, `record ${recordFullKey(want)} is missing`);
    assertRecordEqual(got, want);
  }
  if (!versions) return;
  const copies = expected
    .filter((r): r is TreeNodeRecord => r.kind === 'treeNode')
    .flatMap((r) => (r.previous === undefined ? [r.latest] : [r.latest, r.previous]));
  const got = await db.batchGetNodeVersions!(
    copies.map((n) => n.label),
    copies.map((n) => n.lastEpoch),
  );
  copies.forEach((want, i) => {
    const version = got[i]?.latest;
    assert.ok(version, `version ${want.label} of epoch ${want.lastEpoch} is missing`);
    assert.ok(version.parent.isPrefixOf(want.parent), `${want.label}: its parent as written`);
    const asWanted = { ...version, parent: want.parent };
    assertRecordEqual(
      { kind: 'treeNode', label: want.label, latest: asWanted, previous: undefined },
      { kind: 'treeNode', label: want.label, latest: want, previous: undefined },
    );
  });
}
