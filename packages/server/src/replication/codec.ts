/**
 * Changes to a store as bytes, for replicating a memory store between the processes of
 * `akd serve` (a memory store lives in one process; each process keeps a replica). A change
 * is a batch of records (written atomically), a setting or an audit blob. Layout, all integers
 * big-endian: a change is a kind byte (1 records, 2 setting, 3 audit blob) then its body;
 * records are `u32 count` then each record as `@akd-ts/storage` writes it (record-codec.ts: a
 * kind byte and its fields), which is also how a PackedMemoryDatabase keeps them; a setting
 * is two `u32 length || UTF-8`; an audit blob is `u64 epoch || previous hash || current hash
 * || u32 length || data`; stored VRF proofs (kind 4) are `u32 count` then each as `u32 length ||
 * key bytes || u32 length || value bytes` (@akd-ts/storage vrf-proofs.ts). Decoded hashes and
 * labels are views of the bytes (no copy).
 */

import {
  ByteReader,
  ByteWriter,
  skipRecord,
  writeRecord,
  type AuditBlobRecord,
  type DbRecord,
  type VrfProofRecord,
  vrfProofKeyBytes,
  vrfProofKeyFromBytes,
  vrfProofRecordOf,
  vrfProofValueBytes,
} from '@akd-ts/storage';

/** One change of a store. */
export type Change =
  | { kind: 'records'; records: DbRecord[] }
  | { kind: 'setting'; name: string; value: string }
  | { kind: 'auditBlob'; blob: AuditBlobRecord }
  | { kind: 'vrfProofs'; proofs: VrfProofRecord[] };

const CHANGE = { records: 1, setting: 2, auditBlob: 3, vrfProofs: 4 } as const;

/**
 * The bytes of `changes`, in order.
 *
 * @example readChanges(encodeChanges([{ kind: 'setting', name: 'a', value: 'b' }]))
 */
export function encodeChanges(changes: Change[]): Uint8Array {
  const w = new ByteWriter();
  for (const c of changes) {
    w.u8(CHANGE[c.kind]);
    if (c.kind === 'records') {
      w.u32(c.records.length);
      for (const r of c.records) writeRecord(w, r);
    } else if (c.kind === 'setting') {
      w.text(c.name);
      w.text(c.value);
    } else if (c.kind === 'vrfProofs') {
      w.u32(c.proofs.length);
      for (const p of c.proofs) {
        w.bytes(vrfProofKeyBytes(p));
        w.bytes(vrfProofValueBytes(p));
      }
    } else {
      w.u64(c.blob.epoch);
      w.raw(c.blob.previousHash);
      w.raw(c.blob.currentHash);
      w.bytes(c.blob.data);
    }
  }
  return w.done();
}

/** A change whose records stay bytes: `u32 count` then the records (what a packed store imports). */
export type RawChange =
  | { kind: 'records'; body: Uint8Array }
  | { kind: 'setting'; name: string; value: string }
  | { kind: 'auditBlob'; blob: AuditBlobRecord }
  | { kind: 'vrfProofs'; proofs: VrfProofRecord[] };

/**
 * The changes in `bytes`, records left as bytes (views of `bytes`), each checked as
 * `skipRecord` checks it: a store can take them without building objects.
 * @throws RangeError for bytes that are not changes
 */
export function readChanges(bytes: Uint8Array): RawChange[] {
  const r = new ByteReader(bytes);
  const out: RawChange[] = [];
  while (r.left > 0) {
    const kind = r.u8();
    if (kind === CHANGE.records) {
      const start = r.at;
      const count = r.u32();
      for (let i = 0; i < count; i++) skipRecord(r);
      out.push({ kind: 'records', body: bytes.subarray(start, r.at) });
    } else if (kind === CHANGE.setting) {
      out.push({ kind: 'setting', name: r.text(), value: r.text() });
    } else if (kind === CHANGE.auditBlob) {
      const epoch = r.u64();
      const previousHash = r.raw(32);
      const currentHash = r.raw(32);
      out.push({ kind: 'auditBlob', blob: { epoch, previousHash, currentHash, data: r.bytes() } });
    } else if (kind === CHANGE.vrfProofs) {
      const proofs: VrfProofRecord[] = [];
      for (let i = r.u32(); i > 0; i--) {
        proofs.push(vrfProofRecordOf(vrfProofKeyFromBytes(r.bytes()), r.bytes()));
      }
      out.push({ kind: 'vrfProofs', proofs });
    } else {
      throw new RangeError(`unknown change kind ${kind}`);
    }
  }
  return out;
}

/** The byte a records change starts with: `body` (`u32 count` then records) follows it. */
export const RECORDS_CHANGE = Uint8Array.of(CHANGE.records);
