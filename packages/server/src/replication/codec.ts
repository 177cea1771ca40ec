/**
 * Changes to a store as bytes, for replicating a memory store between the processes of
 * `akd serve` (a memory store lives in one process; each process keeps a replica). A change
 * is a batch of records (written atomically), a setting or an audit blob. Layout, all integers
 * big-endian: a change is a kind byte (1 records, 2 setting, 3 audit blob) then its body;
 * records are `u32 count` then each record: a kind byte (0 azks, 1 tree node, 2 value state)
 * and its fields; a label is `u16 len || 32 bytes`; bytes are `u32 length || data`; epochs
 * and counts are u64. Decoded hashes and labels are views of the bytes (no copy).
 */

import { NodeLabel } from '@akd-ts/core';
import type { AuditBlobRecord, DbRecord, NodeType, TreeNode } from '@akd-ts/storage';

/** One change of a store. */
export type Change =
  | { kind: 'records'; records: DbRecord[] }
  | { kind: 'setting'; name: string; value: string }
  | { kind: 'auditBlob'; blob: AuditBlobRecord };

const CHANGE = { records: 1, setting: 2, auditBlob: 3 } as const;
const RECORD = { azks: 0, treeNode: 1, valueState: 2 } as const;

class Writer {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  at = 0;

  private room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.at + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.at));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
  u8(v: number): void {
    this.room(1);
    this.buf[this.at++] = v;
  }
  u16(v: number): void {
    this.room(2);
    this.view.setUint16(this.at, v);
    this.at += 2;
  }
  u32(v: number): void {
    this.room(4);
    this.view.setUint32(this.at, v);
    this.at += 4;
  }
  u64(v: bigint): void {
    this.room(8);
    this.view.setBigUint64(this.at, v);
    this.at += 8;
  }
  raw(bytes: Uint8Array): void {
    this.room(bytes.length);
    this.buf.set(bytes, this.at);
    this.at += bytes.length;
  }
  bytes(bytes: Uint8Array): void {
    this.u32(bytes.length);
    this.raw(bytes);
  }
  text(s: string): void {
    this.bytes(new TextEncoder().encode(s));
  }
  label(l: NodeLabel): void {
    this.u16(l.len);
    this.raw(l.val);
  }
  done(): Uint8Array {
    return this.buf.slice(0, this.at);
  }
}

function writeNode(w: Writer, n: TreeNode): void {
  w.label(n.label);
  w.u64(n.lastEpoch);
  w.u64(n.minDescendantEpoch);
  w.label(n.parent);
  w.u8(n.nodeType);
  w.u8((n.leftChild ? 1 : 0) | (n.rightChild ? 2 : 0));
  if (n.leftChild) w.label(n.leftChild);
  if (n.rightChild) w.label(n.rightChild);
  w.raw(n.hash);
}

function writeRecord(w: Writer, r: DbRecord): void {
  w.u8(RECORD[r.kind]);
  switch (r.kind) {
    case 'azks':
      w.u64(r.latestEpoch);
      w.u64(r.numNodes);
      break;
    case 'treeNode':
      w.label(r.label);
      writeNode(w, r.latest);
      w.u8(r.previous ? 1 : 0);
      if (r.previous) writeNode(w, r.previous);
      break;
    case 'valueState':
      w.bytes(r.username);
      w.u64(r.epoch);
      w.u64(r.version);
      w.label(r.label);
      w.bytes(r.value);
      break;
  }
}

/**
 * The bytes of `changes`, in order.
 *
 * @example decodeChanges(encodeChanges([{ kind: 'setting', name: 'a', value: 'b' }]))
 */
export function encodeChanges(changes: Change[]): Uint8Array {
  const w = new Writer();
  for (const c of changes) {
    w.u8(CHANGE[c.kind]);
    if (c.kind === 'records') {
      w.u32(c.records.length);
      for (const r of c.records) writeRecord(w, r);
    } else if (c.kind === 'setting') {
      w.text(c.name);
      w.text(c.value);
    } else {
      w.u64(c.blob.epoch);
      w.raw(c.blob.previousHash);
      w.raw(c.blob.currentHash);
      w.bytes(c.blob.data);
    }
  }
  return w.done();
}

class Reader {
  private readonly view: DataView;
  at = 0;
  constructor(private readonly buf: Uint8Array) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }
  get left(): number {
    return this.buf.length - this.at;
  }
  private need(n: number): void {
    if (this.at + n > this.buf.length) throw new RangeError('truncated change bytes');
  }
  u8(): number {
    this.need(1);
    return this.buf[this.at++]!;
  }
  u16(): number {
    this.need(2);
    const v = this.view.getUint16(this.at);
    this.at += 2;
    return v;
  }
  u32(): number {
    this.need(4);
    const v = this.view.getUint32(this.at);
    this.at += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.view.getBigUint64(this.at);
    this.at += 8;
    return v;
  }
  raw(n: number): Uint8Array {
    this.need(n);
    const v = this.buf.subarray(this.at, this.at + n);
    this.at += n;
    return v;
  }
  bytes(): Uint8Array {
    return this.raw(this.u32());
  }
  text(): string {
    return new TextDecoder().decode(this.bytes());
  }
  label(): NodeLabel {
    const len = this.u16();
    return new NodeLabel(this.raw(32), len);
  }
}

function readNode(r: Reader): TreeNode {
  const label = r.label();
  const lastEpoch = r.u64();
  const minDescendantEpoch = r.u64();
  const parent = r.label();
  const nodeType = r.u8() as NodeType;
  const children = r.u8();
  const leftChild = children & 1 ? r.label() : undefined;
  const rightChild = children & 2 ? r.label() : undefined;
  return {
    label,
    lastEpoch,
    minDescendantEpoch,
    parent,
    nodeType,
    leftChild,
    rightChild,
    hash: r.raw(32),
  };
}

function readRecord(r: Reader): DbRecord {
  const kind = r.u8();
  switch (kind) {
    case RECORD.azks:
      return { kind: 'azks', latestEpoch: r.u64(), numNodes: r.u64() };
    case RECORD.treeNode: {
      const label = r.label();
      const latest = readNode(r);
      const previous = r.u8() === 1 ? readNode(r) : undefined;
      return { kind: 'treeNode', label, latest, previous };
    }
    case RECORD.valueState:
      return {
        kind: 'valueState',
        username: r.bytes(),
        epoch: r.u64(),
        version: r.u64(),
        label: r.label(),
        value: r.bytes(),
      };
    default:
      throw new RangeError(`unknown record kind ${kind} in change bytes`);
  }
}

/**
 * The changes in `bytes`. Decoding yields to the event loop every `yieldEvery` records, so a
 * process that answers requests keeps answering while it reads a large change.
 * @throws RangeError for bytes that are not changes
 */
export async function decodeChanges(bytes: Uint8Array, yieldEvery = 5_000): Promise<Change[]> {
  const r = new Reader(bytes);
  const out: Change[] = [];
  while (r.left > 0) {
    const kind = r.u8();
    if (kind === CHANGE.records) {
      const count = r.u32();
      const records: DbRecord[] = [];
      for (let i = 0; i < count; i++) {
        records.push(readRecord(r));
        if ((i + 1) % yieldEvery === 0) await new Promise((resolve) => setImmediate(resolve));
      }
      out.push({ kind: 'records', records });
    } else if (kind === CHANGE.setting) {
      out.push({ kind: 'setting', name: r.text(), value: r.text() });
    } else if (kind === CHANGE.auditBlob) {
      const epoch = r.u64();
      const previousHash = r.raw(32);
      const currentHash = r.raw(32);
      out.push({ kind: 'auditBlob', blob: { epoch, previousHash, currentHash, data: r.bytes() } });
    } else {
      throw new RangeError(`unknown change kind ${kind}`);
    }
  }
  return out;
}
