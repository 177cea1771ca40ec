/**
 * Stored VRF proofs as rows of a label's entries (vrf-proofs.ts holds the records): the SQL
 * drivers keep one row per label and write, keyed (label, seq), whose value is the entries
 * that write stored for the label. A publish stores a new label's existence, freshness and
 * marker proofs together, so the label and the row's own costs (a key of its own per proof, in
 * PostgreSQL a tuple header and an index entry each) are paid once per label and epoch
 * instead of once per proof. A read takes every row of the labels it needs, in seq order.
 *
 * `seq` only has to grow with time for a label: a later row's nonce wins over an earlier
 * one's (a version proved as a marker gets its nonce when it is published; a tombstone's
 * restamp changes it), and a row never rewrites another. Proofs are a function of their key,
 * so two entries of one key hold the same proof.
 *
 * An entry (all our own layout; the proof is spec 5.3's, the nonce spec 6's):
 *
 *     tag u8           bit 0 freshness (1 fresh), bit 1 a nonce follows,
 *                      bits 4-7 the version's length n in bytes (0-8), bits 2-3 zero
 *     version          n bytes, big-endian, no leading zero byte (n = 0 for version 0)
 *     proof            80 bytes (spec 5.3)
 *     nonce            32 bytes (spec 6), when bit 1 is set
 */

import {
  NONCE_BYTES,
  VRF_PROOF_BYTES,
  labelChars,
  type VrfProofKey,
  type VrfProofRecord,
} from './vrf-proofs.js';

/**
 * The most bytes of label and entries a row holds before its entries go on in another row.
 * SQLite keeps a row of a WITHOUT ROWID table whole on its 4 KiB page up to 1,002 bytes of
 * record (its largest local payload on such pages); past that the rest takes an overflow page
 * of its own, 4 KiB for a few hundred bytes. 980 leaves room for the record's header and its
 * seq. PostgreSQL moves a row out of line past about 2 KB: this stays well under it.
 */
export const VRF_PROOF_ROW_BYTES = 980;

/** One stored row: the label and the entries one write stored for it. */
export interface VrfProofRow {
  label: Uint8Array;
  entries: Uint8Array;
}

const FRESH = 0x01;
const NONCED = 0x02;

/** 2^(8n) for n = 0..8: a version below LIMITS[n] takes at most n bytes. */
const LIMITS = Array.from({ length: 9 }, (_, n) => 1n << BigInt(8 * n));

/** Bytes of `version` without leading zero bytes (0 for version 0). */
function versionLength(version: bigint): number {
  let n = 0;
  while (n < 8 && version >= LIMITS[n]!) n++;
  return n;
}

/** The bytes of one entry (module comment). */
function entryLength(r: VrfProofRecord): number {
  return 1 + versionLength(r.version) + VRF_PROOF_BYTES + (r.nonce === undefined ? 0 : NONCE_BYTES);
}

function writeEntry(r: VrfProofRecord, out: Uint8Array, at: number): number {
  const n = versionLength(r.version);
  out[at] = (n << 4) | (r.nonce === undefined ? 0 : NONCED) | (r.freshness === 1 ? FRESH : 0);
  if (n <= 6) {
    // below 2^48: exact as a number, without a bigint per byte
    let v = Number(r.version);
    for (let i = n; i >= 1; i--) {
      out[at + i] = v % 256;
      v = Math.floor(v / 256);
    }
  } else {
    for (let i = n; i >= 1; i--) out[at + i] = Number((r.version >> BigInt(8 * (n - i))) & 0xffn);
  }
  at += 1 + n;
  out.set(r.proof, at);
  at += VRF_PROOF_BYTES;
  if (r.nonce !== undefined) {
    out.set(r.nonce, at);
    at += NONCE_BYTES;
  }
  return at;
}

/**
 * The rows that store `records` (checked by the caller): one record per key (a later one in
 * the batch wins: its proof, and its nonce unless it has none, when the earlier one's stays), grouped by label in the order labels first
 * appear, a label's entries in several rows when they pass `max` bytes with the label (at
 * least one entry per row).
 */
export function encodeVrfProofRows(
  records: VrfProofRecord[],
  max = VRF_PROOF_ROW_BYTES,
): VrfProofRow[] {
  // by label in first appearance, each label's keys by slot (few: a list, not a map)
  const byLabel = new Map<string, { slots: (number | string)[]; group: VrfProofRecord[] }>();
  for (const r of records) {
    const chars = labelChars(r.label);
    let label = byLabel.get(chars);
    if (label === undefined) byLabel.set(chars, (label = { slots: [], group: [] }));
    const slot = slotOf(r.freshness, r.version);
    const i = label.slots.indexOf(slot);
    if (i < 0) {
      label.slots.push(slot);
      label.group.push(r);
    } else {
      const earlier = label.group[i]!;
      const keep = r.nonce === undefined && earlier.nonce !== undefined;
      label.group[i] = keep ? { ...r, nonce: earlier.nonce } : r;
    }
  }
  const rows: VrfProofRow[] = [];
  for (const { group } of byLabel.values()) {
    const label = group[0]!.label;
    let start = 0;
    while (start < group.length) {
      let end = start;
      let bytes = 0;
      do bytes += entryLength(group[end++]!);
      while (end < group.length && label.length + bytes + entryLength(group[end]!) <= max);
      const entries = new Uint8Array(bytes);
      let at = 0;
      for (let i = start; i < end; i++) at = writeEntry(group[i]!, entries, at);
      rows.push({ label: label.slice(), entries });
      start = end;
    }
  }
  return rows;
}

/**
 * Calls `each` with every entry of a row's `entries`, in order: its freshness, its version (a
 * number below 2^48, else a bigint; both print alike) and where its proof and nonce start
 * (-1: no nonce). Validates every entry, wanted or not.
 * @throws RangeError for entries that are not a whole number of well-formed entries
 */
function walkEntries(
  entries: Uint8Array,
  each: (freshness: 0 | 1, version: number | bigint, proofAt: number, nonceAt: number) => void,
): void {
  if (entries.length === 0) throw new RangeError('a VRF proof row holds no entry');
  let at = 0;
  while (at < entries.length) {
    const start = at;
    const tag = entries[at++]!;
    const n = tag >> 4;
    if ((tag & 0x0c) !== 0 || n > 8) {
      throw new RangeError(`VRF proof entry at byte ${start} has tag 0x${tag.toString(16)}`);
    }
    const nonced = (tag & NONCED) !== 0;
    const end = at + n + VRF_PROOF_BYTES + (nonced ? NONCE_BYTES : 0);
    if (end > entries.length) {
      throw new RangeError(`VRF proof entry at byte ${start} runs past the row's end`);
    }
    if (n > 0 && entries[at] === 0) {
      throw new RangeError(`VRF proof entry at byte ${start} has a version with a leading zero`);
    }
    let version: number | bigint;
    if (n <= 6) {
      let v = 0;
      for (let i = 0; i < n; i++) v = v * 256 + entries[at++]!;
      version = v;
    } else {
      let v = 0n;
      for (let i = 0; i < n; i++) v = (v << 8n) | BigInt(entries[at++]!);
      if (v >= 1n << 63n) throw new RangeError(`VRF proof entry at byte ${start} has version ${v}`);
      version = v;
    }
    each((tag & FRESH) === 0 ? 0 : 1, version, at, nonced ? at + VRF_PROOF_BYTES : -1);
    at = end;
  }
}

/**
 * The records of one row's `entries`, for `label`.
 * @throws RangeError for entries that are not a whole number of well-formed entries
 */
export function decodeVrfProofEntries(label: Uint8Array, entries: Uint8Array): VrfProofRecord[] {
  const out: VrfProofRecord[] = [];
  walkEntries(entries, (freshness, version, proofAt, nonceAt) => {
    const record: VrfProofRecord = {
      label: label.slice(),
      freshness,
      version: BigInt(version),
      proof: entries.slice(proofAt, proofAt + VRF_PROOF_BYTES),
    };
    if (nonceAt >= 0) record.nonce = entries.slice(nonceAt, nonceAt + NONCE_BYTES);
    out.push(record);
  });
  return out;
}

/**
 * A (freshness, version) as a map key: a number for a version below 2^48 (the ones in use),
 * else a string. Both sides of a lookup make it the same way, whatever type the version had.
 */
function slotOf(freshness: 0 | 1, version: number | bigint): number | string {
  if (typeof version === 'bigint') {
    if (version >= 1n << 48n) return `${freshness}:${version}`;
    version = Number(version);
  }
  return version * 2 + freshness;
}

/**
 * The records of a read's `keys`, gathered from what the store holds for their labels: rows
 * of the layout before rows by label first (`addRecord`), then each label's rows in seq order
 * (`addRow`), merged as later writes (a later nonce wins; none never erases one). Only the wanted entries
 * become records: a read takes every row of a label, and an update epoch reads hundreds of
 * thousands of labels' rows for a few of each one's proofs. A record shares its key's label.
 */
export class VrfProofPicker {
  /**
   * Label (labelChars) -> the keys asked for with their slots (`slotOf`): a few per label, so
   * a list, which costs a fraction of a map of its own.
   */
  readonly #wanted = new Map<string, { slot: number | string; key: VrfProofKey }[]>();
  readonly #found = new Map<VrfProofKey, VrfProofRecord>();

  constructor(keys: VrfProofKey[]) {
    for (const key of keys) {
      const label = labelChars(key.label);
      let slots = this.#wanted.get(label);
      if (slots === undefined) this.#wanted.set(label, (slots = []));
      const slot = slotOf(key.freshness, key.version);
      if (!slots.some((s) => s.slot === slot)) slots.push({ slot, key });
    }
  }

  /** A record of the older layout, older than every row. */
  addRecord(record: VrfProofRecord): void {
    const slots = this.#wanted.get(labelChars(record.label));
    const slot = slotOf(record.freshness, record.version);
    const key = slots?.find((s) => s.slot === slot)?.key;
    if (key !== undefined) this.#merge(key, record.proof, record.nonce);
  }

  /**
   * A row of `label`'s entries, later than those added before.
   * @throws RangeError for malformed entries (decodeVrfProofEntries)
   */
  addRow(label: Uint8Array, entries: Uint8Array): void {
    const slots = this.#wanted.get(labelChars(label));
    walkEntries(entries, (freshness, version, proofAt, nonceAt) => {
      if (slots === undefined) return;
      const slot = slotOf(freshness, version);
      const key = slots.find((s) => s.slot === slot)?.key;
      if (key === undefined) return;
      const nonce = nonceAt < 0 ? undefined : entries.slice(nonceAt, nonceAt + NONCE_BYTES);
      this.#merge(key, entries.slice(proofAt, proofAt + VRF_PROOF_BYTES), nonce);
    });
  }

  /**
   * The keys asked for, once each, grouped by label in first appearance: what a read fetches
   * (every row of each label, and the keys themselves from the older layout).
   */
  groups(): { label: Uint8Array; keys: VrfProofKey[] }[] {
    return Array.from(this.#wanted.values(), (slots) => ({
      label: slots[0]!.key.label,
      keys: slots.map((s) => s.key),
    }));
  }

  /** One record per key found; keys with none are left out. */
  records(): VrfProofRecord[] {
    return [...this.#found.values()];
  }

  #merge(key: VrfProofKey, proof: Uint8Array, nonce: Uint8Array | undefined): void {
    const { label, freshness, version } = key;
    const record: VrfProofRecord = { label, freshness, version, proof };
    const kept = nonce ?? this.#found.get(key)?.nonce;
    if (kept !== undefined) record.nonce = kept;
    this.#found.set(key, record);
  }
}
