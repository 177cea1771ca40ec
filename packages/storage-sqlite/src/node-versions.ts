/**
 * Tree nodes in the `versions` layout (database.ts `NodeLayout`): what `SqliteDatabase` does
 * with them when its store keeps versions. Every method runs inside the transaction the
 * database opened for it (a write, or a read over one snapshot where it takes several
 * statements).
 *
 * - Writes (rule 1): the latest version of each record, unless its write epoch is at most the
 *   store's epoch before the write, appended under (write epoch, label); a root version also
 *   notes its epoch in node_roots (rule 3). Previous copies are never written.
 * - Reads by version: one statement per chunk of keys, each a probe of the primary key,
 *   answered as one joined byte string (versions-sql.ts) that is decoded, or rewritten into
 *   the record codec's form, without a row object per version.
 * - Reads by label (rule 4): a walk from the root of the store's epoch, all labels asked at
 *   once, one batched read per tree level; then the same from the root of the epoch before
 *   each version found, for its previous copy.
 * - Deletions: versions no served walk reaches, in key order (version-deletion.ts), a root
 *   version's epoch dropped from node_roots with it.
 */

import { NodeLabel, toHex } from '@akd-ts/core';
import type { NodeRecordBytes, TreeNode, TreeNodeRecord } from '@akd-ts/storage';
import type { SqliteStatement } from './client.js';
import { MAX_STORED_INTEGER, type Row } from './codec.js';
import { corruptRow } from './errors.js';
import { chunks } from './sql.js';
import { deleteVersions } from './version-deletion.js';
import {
  compactCodecLabels,
  compactLabel,
  decodeVersion,
  encodeVersionData,
  versionRecordLength,
  VERSIONS_TABLE,
  writeVersionRecord,
} from './version-codec.js';
import {
  INSERT_ROOT_SQL,
  STORE_EPOCH_SQL,
  selectJoinedVersionsSql,
  selectVersionRowsSql,
  upsertVersionsSql,
} from './versions-sql.js';

/** Whether `label` (compact) is the root's. */
const isRoot = (label: Uint8Array) => label.length === 2 && label[0] === 0 && label[1] === 0;

/** An epoch as a key parameter: NULL (matching nothing) where no row can have it. */
const epochParam = (epoch: bigint) => (epoch >= 0n && epoch <= MAX_STORED_INTEGER ? epoch : null);

/**
 * Checks that the two lists of a read by version are aligned.
 * @throws RangeError where their lengths differ
 */
export function checkAligned(labels: number, epochs: number): void {
  if (labels !== epochs) {
    throw new RangeError(`${labels} labels but ${epochs} epochs: the lists must be aligned`);
  }
}

/** A version found by a read: its data is `at` .. `end` of `bytes`. */
type Visit = (position: number, bytes: Uint8Array, at: number, end: number) => void;

/** A row of node_versions: write epoch, compact label, data. */
export type VersionRow = [bigint, Uint8Array, Uint8Array];

/** One step of a walk: a version to read and the targets (indices) whose paths pass it. */
interface Step {
  label: NodeLabel;
  epoch: bigint;
  targets: number[];
}

export class NodeVersions {
  /** The reused parameter arrays of the version upserts, by length. */
  readonly #params = new Map<number, unknown[]>();

  /**
   * @param stmt a cached prepared statement of the database's connection
   * @param readChunkKeys keys per read statement
   * @param writeChunkRows rows per upsert statement
   */
  constructor(
    private readonly stmt: (sql: string) => SqliteStatement,
    private readonly readChunkKeys: number,
    private readonly writeChunkRows: number,
  ) {}

  /** The store's epoch (rule 3): the newest root version's write epoch, if any. */
  storeEpoch(): bigint | undefined {
    const [epoch] = this.stmt(STORE_EPOCH_SQL).get() as Row;
    if (epoch === null) return undefined;
    if (typeof epoch !== 'bigint' || epoch < 0n) {
      throw corruptRow('node_roots', 'max(epoch)', `the newest epoch is not an integer`);
    }
    return epoch;
  }

  // ---- writes -------------------------------------------------------------------------

  /**
   * Writes the versions `records` store (rule 1), given the store's epoch before the write
   * began: each encoded and checked first (a RangeError or TypeError leaves the rest unwritten,
   * and the caller's transaction rolls back what was), then appended in key order, so that an
   * epoch's rows fill its pages one after another.
   */
  write(records: readonly TreeNodeRecord[], storeEpoch: bigint | undefined): void {
    const rows: VersionRow[] = [];
    for (const r of records) {
      const data = encodeVersionData(r.latest, 'treeNode.latest');
      const epoch = r.latest.lastEpoch;
      if (storeEpoch !== undefined && epoch <= storeEpoch) continue;
      rows.push([epoch, compactLabel(r.label), data]);
    }
    this.append(rows);
  }

  /**
   * Upserts `rows` in key order (a version written twice: the later one stays), and notes the
   * epochs of root versions.
   */
  append(rows: VersionRow[]): void {
    // stable: of two writes of one version, the later is upserted last and stays
    rows.sort((a, b) => (a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : Buffer.compare(a[1], b[1])));
    let at = 0;
    for (const size of chunks(rows.length, this.writeChunkRows, true)) {
      let params = this.#params.get(size);
      if (params === undefined) this.#params.set(size, (params = new Array<unknown>(3 * size)));
      for (let i = 0; i < size; i++) {
        const [epoch, label, data] = rows[at + i]!;
        params[3 * i] = epoch;
        params[3 * i + 1] = label;
        params[3 * i + 2] = data;
      }
      this.stmt(upsertVersionsSql(size)).run(params);
      at += size;
    }
    const root = this.stmt(INSERT_ROOT_SQL);
    for (const [epoch, label] of rows) if (isRoot(label)) root.run(epoch);
  }

  /**
   * Deletes the versions of `labels[i]` written in `epochs[i]` (checked by the caller).
   * @returns how many were stored
   */
  delete(labels: readonly NodeLabel[], epochs: readonly bigint[]): number {
    return deleteVersions(this.stmt, labels, epochs, this.writeChunkRows);
  }

  // ---- reads by version ---------------------------------------------------------------

  /**
   * Finds the versions at `count` keys, `keyAt(i, into)` writing key `i`'s parameters (epoch,
   * compact label, or NULLs for a key no row has) at `into[at]` and `into[at + 1]`, and visits
   * each found: one statement per chunk of `readChunkKeys` keys.
   * @returns how many statements it ran
   */
  private find(
    count: number,
    keyAt: (i: number, into: unknown[], at: number) => void,
    visit: Visit,
  ) {
    const sizes = chunks(count, this.readChunkKeys, false);
    let from = 0;
    for (const keys of sizes) {
      const params = new Array<unknown>(3 * keys);
      for (let i = 0; i < keys; i++) {
        if (from + i < count) {
          params[3 * i] = i + 1;
          keyAt(from + i, params, 3 * i + 1);
        } else {
          params[3 * i] = params[3 * i + 1] = params[3 * i + 2] = null;
        }
      }
      const [joined, unwritten] = this.stmt(selectJoinedVersionsSql(keys)).get(params) as Row;
      if (unwritten !== null && Number(unwritten) > 0) {
        // a row the join cannot frame: read as rows, whose decoding names what is wrong
        for (const [position, data] of this.stmt(selectVersionRowsSql(keys)).all(params) as Row[]) {
          const i = from + Number(position) - 1;
          if (!(data instanceof Uint8Array)) {
            visitNotBlob(params, 3 * (i - from), data);
          }
          const bytes = data as Uint8Array;
          visit(i, bytes, 0, bytes.length);
        }
      } else if (joined instanceof Uint8Array) {
        for (let at = 0; at < joined.length;) {
          const i = from + ((joined[at]! << 8) | joined[at + 1]!) - 1;
          const end = at + 3 + joined[at + 2]!;
          visit(i, joined, at + 3, end);
          at = end;
        }
      }
      from += keys;
    }
    return sizes.length;
  }

  /** How many statements a read of `count` keys takes. */
  statements(count: number): number {
    return chunks(count, this.readChunkKeys, false).length;
  }

  /**
   * The versions of `labels[i]` written in `epochs[i]`, aligned with them (undefined where
   * none is stored).
   * @throws AkdError `STORAGE_CORRUPT` naming a version that does not decode
   */
  readVersions(labels: readonly NodeLabel[], epochs: readonly bigint[]): (TreeNode | undefined)[] {
    const out = new Array<TreeNode | undefined>(labels.length).fill(undefined);
    if (labels.length === 0) return out;
    this.find(
      labels.length,
      (i, into, at) => {
        const epoch = epochParam(epochs[i]!);
        into[at] = epoch;
        into[at + 1] = epoch === null ? null : compactLabel(labels[i]!);
      },
      (i, bytes, at, end) => {
        out[i] = decodeVersion(bytes, at, end, labels[i]!, epochs[i]!);
      },
    );
    return out;
  }

  /**
   * `readVersions` in the record codec's form (a record with no previous copy), for labels in
   * the codec's form (34 bytes each): one buffer, each version rewritten from its data straight
   * into it.
   */
  readVersionBytes(labels: Uint8Array, epochs: BigUint64Array): NodeRecordBytes {
    const count = epochs.length;
    const buffer = new Int32Array(count).fill(-1);
    const starts = new Int32Array(count).fill(-1);
    if (count === 0) return { buffers: [], buffer, starts };
    const compact = compactCodecLabels(labels, count);
    // where each found version's data is, to size the answer before writing it
    const foundIn = new Array<Uint8Array | undefined>(count).fill(undefined);
    const foundAt = new Int32Array(count);
    const foundEnd = new Int32Array(count);
    let size = 0;
    this.find(
      count,
      (i, into, at) => {
        const label = compact[i];
        const epoch = label === undefined ? null : epochParam(epochs[i]!);
        into[at] = epoch;
        into[at + 1] = epoch === null ? null : label;
      },
      (i, bytes, at, end) => {
        foundIn[i] = bytes;
        foundAt[i] = at;
        foundEnd[i] = end;
        // the children byte, checked when the version is written
        size += versionRecordLength(end > at + 1 ? bytes[at + 1]! & 3 : 0);
      },
    );
    const out = new Uint8Array(size);
    let o = 0;
    for (let i = 0; i < count; i++) {
      const bytes = foundIn[i];
      if (bytes === undefined) continue;
      buffer[i] = 0;
      starts[i] = o;
      o = writeVersionRecord(out, o, bytes, foundAt[i]!, foundEnd[i]!, labels, 34 * i, epochs[i]!);
    }
    return { buffers: [out], buffer, starts };
  }

  // ---- reads by label (rule 4) --------------------------------------------------------

  /**
   * The records of `labels` as reads by label answer them in this layout (rule 4), aligned
   * with them: the version visible at the store's epoch, found by a walk from its root, and
   * as the previous copy the version visible just before it was written, found by a walk from
   * the root of that epoch (undefined where there is none).
   */
  readByLabel(labels: readonly NodeLabel[]): (TreeNodeRecord | undefined)[] {
    const out = new Array<TreeNodeRecord | undefined>(labels.length).fill(undefined);
    const epoch = labels.length === 0 ? undefined : this.storeEpoch();
    if (epoch === undefined) return out;
    const latest = this.walk(
      labels,
      labels.map(() => epoch),
    );
    const previous = this.walk(
      labels,
      latest.map((n) => (n === undefined || n.lastEpoch === 0n ? undefined : n.lastEpoch - 1n)),
    );
    latest.forEach((n, i) => {
      if (n === undefined) return;
      out[i] = { kind: 'treeNode', label: labels[i]!, latest: n, previous: previous[i] };
    });
    return out;
  }

  /**
   * The version of each of `targets` visible at `epochs[i]` (undefined: none asked): a walk
   * from the root version written in that epoch, down the children whose labels prefix the
   * target, each read by the write epoch its parent records, all targets a level at a time.
   * Undefined where the walk ends above the target.
   * @throws AkdError `STORAGE_CORRUPT` for a child that does not lie below its parent (a walk
   * through it could go round for ever)
   */
  private walk(
    targets: readonly NodeLabel[],
    epochs: readonly (bigint | undefined)[],
  ): (TreeNode | undefined)[] {
    const out = new Array<TreeNode | undefined>(targets.length).fill(undefined);
    let level = new Map<string, Step>();
    const add = (into: Map<string, Step>, label: NodeLabel, epoch: bigint, target: number) => {
      const key = `${epoch}/${label.key}`;
      let step = into.get(key);
      if (step === undefined) into.set(key, (step = { label, epoch, targets: [] }));
      step.targets.push(target);
    };
    epochs.forEach((epoch, i) => {
      if (epoch !== undefined) add(level, NodeLabel.root(), epoch, i);
    });
    while (level.size > 0) {
      const steps = [...level.values()];
      const nodes = this.readVersions(
        steps.map((s) => s.label),
        steps.map((s) => s.epoch),
      );
      const next = new Map<string, Step>();
      steps.forEach((step, s) => {
        const node = nodes[s];
        if (node === undefined) return;
        for (const t of step.targets) {
          const target = targets[t]!;
          if (node.label.equals(target)) {
            out[t] = node;
            continue;
          }
          const { leftChild: left, rightChild: right } = node;
          let child: NodeLabel;
          let epoch: bigint;
          if (left !== undefined && node.leftEpoch !== undefined && left.isPrefixOf(target)) {
            [child, epoch] = [left, node.leftEpoch];
          } else if (
            right !== undefined &&
            node.rightEpoch !== undefined &&
            right.isPrefixOf(target)
          ) {
            [child, epoch] = [right, node.rightEpoch];
          } else {
            continue;
          }
          if (child.len <= node.label.len) {
            throw corruptRow(
              VERSIONS_TABLE,
              `epoch=${step.epoch} label=${toHex(compactLabel(node.label))}`,
              `its child ${child} does not lie below it`,
            );
          }
          add(next, child, epoch, t);
        }
      });
      level = next;
    }
    return out;
  }
}

/** @throws AkdError `STORAGE_CORRUPT`: the data of the version at `params[at..]` is not a blob. */
function visitNotBlob(params: unknown[], at: number, data: unknown): never {
  const epoch = params[at + 1];
  const label = params[at + 2] as Uint8Array;
  const what =
    data === null ? 'NULL' : typeof data === 'bigint' ? `the integer ${data}` : `a ${typeof data}`;
  throw corruptRow(
    VERSIONS_TABLE,
    `epoch=${String(epoch)} label=${toHex(label)}`,
    `data is ${what}, not a blob`,
  );
}
