// Rows of a label's VRF proof entries: the bytes of an entry, grouping by label, splitting at
// the row budget, the nonce rules across writes, and malformed entries refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  VRF_PROOF_ROW_BYTES,
  decodeVrfProofEntries,
  encodeVrfProofRows,
  VrfProofPicker,
  vrfProofMapKey,
  type VrfProofRecord,
} from '@akd-ts/storage';

const filled = (n: number, b: number) => new Uint8Array(n).fill(b);
const rec = (label: string, freshness: 0 | 1, version: bigint, nonce?: number): VrfProofRecord => {
  const r: VrfProofRecord = {
    label: new TextEncoder().encode(label),
    freshness,
    version,
    proof: filled(80, Number(version % 251n) + freshness),
  };
  if (nonce !== undefined) r.nonce = filled(32, nonce);
  return r;
};
const byKey = (records: VrfProofRecord[]) =>
  new Map(records.map((r) => [vrfProofMapKey(r), r] as const));

test('an entry is tag, minimal big-endian version, proof, then any nonce', () => {
  const [row] = encodeVrfProofRows([rec('a', 1, 0x0102n, 9), rec('a', 0, 0n)]);
  const e = row!.entries;
  assert.equal(e.length, 1 + 2 + 80 + 32 + 1 + 0 + 80);
  assert.equal(e[0], 0x23); // two version bytes, nonce, fresh
  assert.deepEqual([...e.subarray(1, 3)], [1, 2]);
  assert.equal(e[3 + 80], 9); // the nonce follows the proof
  assert.equal(e[3 + 80 + 32], 0x00); // stale, version 0: no version byte, no nonce
  const back = decodeVrfProofEntries(row!.label, e);
  assert.deepEqual(back, [rec('a', 1, 0x0102n, 9), rec('a', 0, 0n)]);
});

test('records group by label in first appearance, the largest version round-trips', () => {
  const max = (1n << 63n) - 1n;
  const records = [rec('b', 1, 1n, 1), rec('a', 0, 1n), rec('b', 0, 1n), rec('a', 1, max)];
  const rows = encodeVrfProofRows(records);
  assert.deepEqual(
    rows.map((r) => new TextDecoder().decode(r.label)),
    ['b', 'a'],
  );
  const back = rows.flatMap((r) => decodeVrfProofEntries(r.label, r.entries));
  assert.deepEqual(byKey(back), byKey(records));
});

test("a label's entries go on in another row past the budget, at least one per row", () => {
  const records = Array.from({ length: 30 }, (_, i) => rec('label', 1, 1n << BigInt(i)));
  const rows = encodeVrfProofRows(records);
  assert.ok(rows.length > 1);
  for (const r of rows) assert.ok(r.label.length + r.entries.length <= VRF_PROOF_ROW_BYTES);
  const back = rows.flatMap((r) => decodeVrfProofEntries(r.label, r.entries));
  assert.deepEqual(back, records);
  // a budget smaller than one entry still stores it, alone in its row
  const tiny = encodeVrfProofRows(records.slice(0, 3), 10);
  assert.deepEqual(
    tiny.map((r) => decodeVrfProofEntries(r.label, r.entries).length),
    [1, 1, 1],
  );
});

/** The records of `keys` picked from the older layout's `older` records, then `rows` in order. */
function pick(
  keys: VrfProofRecord[],
  rows: { label: Uint8Array; entries: Uint8Array }[],
  older: VrfProofRecord[] = [],
): VrfProofRecord[] {
  const picker = new VrfProofPicker(keys);
  for (const r of older) picker.addRecord(r);
  for (const r of rows) picker.addRow(r.label, r.entries);
  return picker.records();
}

test('within a batch and across writes, a later nonce wins and none never erases one', () => {
  const rows = encodeVrfProofRows([rec('a', 1, 2n, 1), rec('a', 1, 2n), rec('a', 1, 3n, 5)]);
  const inBatch = rows.flatMap((r) => decodeVrfProofEntries(r.label, r.entries));
  assert.equal(inBatch.length, 2);
  assert.equal(inBatch[0]!.nonce![0], 1);
  const later = encodeVrfProofRows([rec('a', 1, 2n), rec('a', 1, 3n, 6)]);
  const keys = [rec('a', 1, 2n), rec('a', 1, 3n)];
  const picked = byKey(pick(keys, [...rows, ...later]));
  assert.equal(picked.get(vrfProofMapKey(rec('a', 1, 2n)))!.nonce![0], 1);
  assert.equal(picked.get(vrfProofMapKey(rec('a', 1, 3n)))!.nonce![0], 6);
  // the older layout's records are older than every row
  const older = [rec('a', 1, 2n, 8), rec('a', 1, 3n, 9)];
  const over = byKey(pick(keys, later, older));
  assert.equal(over.get(vrfProofMapKey(rec('a', 1, 2n)))!.nonce![0], 8);
  assert.equal(over.get(vrfProofMapKey(rec('a', 1, 3n)))!.nonce![0], 6);
});

test('picking answers each wanted key once, of any version length, and leaves out the rest', () => {
  const big = (1n << 63n) - 1n;
  const stored = [rec('a', 1, 1n), rec('a', 0, 1n), rec('a', 1, big), rec('b', 1, 1n)];
  const rows = encodeVrfProofRows(stored);
  const keys = [
    rec('a', 1, 1n),
    rec('a', 1, 1n),
    rec('a', 1, 2n),
    rec('a', 1, big),
    rec('c', 1, 1n),
  ];
  const got = pick(keys, rows, [rec('a', 0, 7n), rec('d', 1, 1n)]);
  assert.deepEqual(byKey(got), byKey([rec('a', 1, 1n), rec('a', 1, big)]));
  assert.equal(got.length, 2);
  // what a read fetches: each label once, in first appearance, its keys once each
  const groups = new VrfProofPicker(keys).groups();
  assert.deepEqual(
    groups.map((g) => [new TextDecoder().decode(g.label), g.keys.map((k) => k.version)]),
    [
      ['a', [1n, 2n, big]],
      ['c', [1n]],
    ],
  );
  // a malformed row is refused even where no entry is wanted
  assert.throws(() =>
    pick([], [{ label: rows[0]!.label, entries: rows[0]!.entries.subarray(0, -1) }]),
  );
});

test('malformed entries are refused', () => {
  const label = new Uint8Array([1]);
  const [row] = encodeVrfProofRows([rec('x', 1, 5n, 3)]);
  const good = row!.entries;
  const with0 = (i: number, b: number) => {
    const e = good.slice();
    e[i] = b;
    return e;
  };
  const cases: [string, Uint8Array, RegExp][] = [
    ['empty', new Uint8Array(0), /no entry/],
    ['reserved tag bits', with0(0, good[0]! | 0x04), /tag/],
    ['version length 9', with0(0, 0x93), /tag/],
    ['truncated', good.subarray(0, good.length - 1), /past the row's end/],
    ['leading zero', Uint8Array.of(0x20, 0, 5, ...filled(80, 0)), /leading zero/],
    ['version 2^63', Uint8Array.of(0x80, 0x80, ...filled(7, 0), ...filled(80, 0)), /version/],
  ];
  for (const [name, entries, message] of cases) {
    assert.throws(() => decodeVrfProofEntries(label, entries), message, name);
  }
});
