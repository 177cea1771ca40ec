/**
 * The preload walk over record bytes (load.ts), for a database that answers tree-node reads
 * in bytes (`Database.batchGetNodeBytes`, such as PackedMemoryDatabase). The log and the cache
 * are asked first, as in the walk over records; each node read from storage is then copied
 * from its record's bytes into its slot, and its children's labels straight into theirs: no
 * record object, label object or cache entry is made per node, which was most of the walk's
 * cost (a record read from a packed store cost a decode into a dozen objects). Records are
 * built from the bytes only for the slots an insertion's commit asks for, and the records read
 * in bytes are not cached.
 */

import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  ByteReader,
  CHILD_BYTES,
  LABEL_BYTES,
  NODE_FIELD,
  NodeType,
  RECORD_KIND,
  RECORD_LATEST,
  nodeAtEpoch,
  nodeBytesLength,
  nodeHashAt,
  readRecord,
  skipRecord,
  u64Number,
  type TreeNode,
  type TreeNodeRecord,
} from '@akd-ts/storage';
import { readInChunks } from '../preload.js';
import { Copy, NONE, UNLOADED, type NodeArena } from './arena.js';
import { rangeBelow, splitIndex } from './elements.js';
import {
  LITTLE_ENDIAN,
  copy32,
  copyWords,
  corrupt,
  reserve,
  recordedEpochs,
  recordedNumber,
  takeSlot,
  type Walk,
} from './walk-state.js';

/** The label object of a slot, built from the arena when first asked for. */
export function slotLabel(w: Walk, slot: number, keep = true): NodeLabel {
  let label = w.labels[slot];
  if (label === undefined) {
    const a = w.arena;
    label = new NodeLabel(a.labels.slice(32 * slot, 32 * slot + 32), a.lens[slot]!);
    if (keep) w.labels[slot] = label;
  }
  return label;
}

/** Where the record bytes of slot `slot` end (they were checked when the slot was filled). */
function recordEnd(buf: Uint8Array, at: number): number {
  const end = new ByteReader(buf, at);
  skipRecord(end);
  return end.at;
}

/** The record of a slot: in a walk over bytes, built from them when first asked for. */
export function slotRecord(w: Walk, slot: number, keep = true): TreeNodeRecord | undefined {
  let record = w.records[slot];
  if (record !== undefined || !w.bytes) return record;
  const answer = slot < w.answerOf.length ? w.answerOf[slot]! : 0;
  if (answer <= 0) return undefined;
  // a copy of its bytes: the record's labels and hashes are views of what it is read from,
  // which may be the store's own memory
  const buf = w.answers[answer - 1]!;
  const at = w.answerAt[slot]!;
  record = readRecord(new ByteReader(buf.slice(at, recordEnd(buf, at)))) as TreeNodeRecord;
  if (keep) w.records[slot] = record;
  return record;
}

/** Where the previous version's flag of the record at `at` of `buf` is. */
function previousFlag(buf: Uint8Array, at: number): number {
  return at + RECORD_LATEST + nodeBytesLength(buf, at + RECORD_LATEST);
}

/**
 * Where a written slot's kept record bytes (the record at `at` of `buf`) end. Its previous
 * version is left out where the commit cannot read it: it builds the written record's
 * previous version from the latest (Copy.Latest) unless the rule of spec 9.2 kept the
 * source's previous (Copy.Previous), and reads the visible version, which is the latest
 * unless that is newer than the insertion's epoch. Such a record ends at its has-previous
 * flag, which is then set to 0 (`cut`).
 */
function keptEnd(w: Walk, slot: number, buf: Uint8Array, at: number) {
  const flag = previousFlag(buf, at);
  const latestEpoch = u64Number(buf, at + RECORD_LATEST + NODE_FIELD.lastEpoch);
  const kept = w.arena.storedPrevious[slot] === Copy.Previous;
  const cut = !kept && latestEpoch <= w.epochNumber;
  return { end: cut ? flag + 1 : recordEnd(buf, at), cut };
}

/**
 * What the walk keeps of the record at `at` of `buf` once its slot is expanded: nothing for a
 * node no element goes beside or below (its parent's side of the elements is empty: the
 * insertion never writes it, and the hash and labels it reads are in the arena); the latest
 * version alone for a node elements go below, which the insertion writes at its epoch, so
 * that its previous copy will be its latest (spec 9.2), when that is older than the epoch;
 * the whole record otherwise (a node a split may push down keeps its previous copy).
 * @returns where the kept bytes end (-1: nothing kept), and whether the previous was cut
 */
function readKeep(w: Walk, slot: number, buf: Uint8Array, at: number) {
  if (w.lo[slot] === w.hi[slot]) return { end: -1, cut: false };
  const a = w.arena;
  const below = a.left[slot]! >= 0 || a.right[slot]! >= 0;
  // in a store of versions, nothing of it: the insertion rewrites it (its children are both
  // loaded, and the commit writes no previous copy), unless it is the root, whose parent
  // only its record holds
  if (below && w.versions && slot !== 0) return { end: -1, cut: false };
  const latestEpoch = u64Number(buf, at + RECORD_LATEST + NODE_FIELD.lastEpoch);
  if (below && latestEpoch < w.epochNumber) return { end: previousFlag(buf, at) + 1, cut: true };
  return { end: recordEnd(buf, at), cut: false };
}

/**
 * Replaces the buffers read `first` (its answer number) and after with one holding what the
 * walk keeps of its `slots`' records (`readKeep`). An answer is about 400 bytes a node, with
 * both versions and the siblings the insertion only hashes: a large preload held them all
 * until the insertion ended (153 MB for 100,000 updates into 500,000 labels), beside the
 * arena. A slot whose record is let go of answers -1, so that a write of it is caught.
 */
function keepRead(w: Walk, slots: number[], first: number): void {
  const { answers, answerOf, answerAt } = w;
  // per slot of the read, where its kept bytes end (0: nothing kept) and whether its previous
  // version is cut
  const ends = new Int32Array(slots.length);
  const cuts = new Uint8Array(slots.length);
  let total = 0;
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i]!;
    if (answerOf[s] === 0) continue;
    const at = answerAt[s]!;
    const { end, cut } = readKeep(w, s, answers[answerOf[s]! - 1]!, at);
    if (end < 0) continue;
    ends[i] = end;
    if (cut) cuts[i] = 1;
    total += end - at;
  }
  const kept = new Uint8Array(total);
  let to = 0;
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i]!;
    if (answerOf[s] === 0) continue;
    const end = ends[i]!;
    if (end === 0) {
      answerOf[s] = -1;
      continue;
    }
    const from = answerAt[s]!;
    kept.set(answers[answerOf[s]! - 1]!.subarray(from, end), to);
    answerOf[s] = first;
    answerAt[s] = to;
    to += end - from;
    if (cuts[i] === 1) kept[to - 1] = 0;
  }
  answers.length = first - 1;
  w.answerViews.length = first - 1;
  answers.push(kept);
  w.answerViews.push(new DataView(kept.buffer));
}

/**
 * Whether the commit of a store of versions reads the record bytes of written slot `slot`:
 * the latest version of a rewritten node comes from the arena, except a child the insertion
 * did not load and the root's parent; a node written unchanged (for a new parent) is its
 * visible version; previous copies are never written.
 */
function needsBytes(a: NodeArena, slot: number): boolean {
  return (
    a.changed[slot] !== 1 ||
    a.left[slot] === UNLOADED ||
    a.right[slot] === UNLOADED ||
    a.parent[slot] === NONE
  );
}

/**
 * Reads again the records of written slots that `keepRead` let go of or cut where the
 * insertion needs them after all: a node the walk judged no element could reach, or one whose
 * source's previous version the write rule kept (spec 9.2), which a tree whose epochs break
 * its invariants can make. The store still holds them as they were read: the transaction
 * writes nothing before it commits. Each is copied, whole, into a buffer of the walk's own.
 */
async function readAgain(w: Walk): Promise<void> {
  const { arena: a, answers, answerOf, answerAt } = w;
  const slots: number[] = [];
  for (let s = 0; s < w.count; s++) {
    const answer = answerOf[s]!;
    if (a.written[s] !== 1 || answer === 0) continue;
    if (w.versions) {
      if (answer > 0 || !needsBytes(a, s)) continue;
    } else if (answer > 0) {
      if (a.storedPrevious[s] !== Copy.Previous) continue;
      const buf = answers[answer - 1]!;
      if (buf[previousFlag(buf, answerAt[s]!)] !== 0) continue;
    }
    slots.push(s);
  }
  if (slots.length === 0) return;
  const { buffers, buffer, starts } = await w.reader.readNodeBytes(
    askedLabels(w, slots),
    askedEpochs(w, slots),
  );
  const found: { buf: Uint8Array; at: number; end: number }[] = [];
  let total = 0;
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i]!;
    const buf = buffer[i]! >= 0 ? buffers[buffer[i]!] : undefined;
    if (buf === undefined) throw corrupt(slotLabel(w, s), 'was read before, and is gone');
    const at = starts[i]!;
    checkRecord(w, s, buf, new DataView(buf.buffer, buf.byteOffset, buf.byteLength), at);
    const end = recordEnd(buf, at);
    found.push({ buf, at, end });
    total += end - at;
  }
  const kept = new Uint8Array(total);
  let to = 0;
  found.forEach(({ buf, at, end }, i) => {
    kept.set(buf.subarray(at, end), to);
    answerOf[slots[i]!] = answers.length + 1;
    answerAt[slots[i]!] = to;
    to += end - at;
  });
  answers.push(kept);
  w.answerViews.push(new DataView(kept.buffer));
}

/**
 * `LoadedTree.keepWritten`: drops what the walk found for the slots the insertion did not
 * write, and keeps the written slots' record bytes (without the versions the commit does not
 * read, see `keptEnd`): where they are most of what the reads kept (`keepRead` let go of
 * what the insertion could not write), in place, and otherwise copied into one buffer.
 */
export async function keepWrittenRecords(w: Walk): Promise<void> {
  const written = w.arena.written;
  for (let s = 0; s < w.count; s++) {
    if (written[s] === 1) continue;
    w.labels[s] = undefined;
    w.records[s] = undefined;
    w.visible[s] = undefined;
  }
  if (!w.bytes) return;
  await readAgain(w);
  const { answers, answerOf, answerAt } = w;
  // per written slot, where its kept bytes end and whether its previous version is cut
  const ends = new Int32Array(w.count);
  const cuts = new Uint8Array(w.count);
  let total = 0;
  for (let s = 0; s < w.count; s++) {
    if (answerOf[s]! <= 0 || written[s] !== 1 || (w.versions && !needsBytes(w.arena, s))) {
      answerOf[s] = 0;
      continue;
    }
    const { end, cut } = keptEnd(w, s, answers[answerOf[s]! - 1]!, answerAt[s]!);
    ends[s] = end;
    if (cut) cuts[s] = 1;
    total += end - answerAt[s]!;
  }
  let read = 0;
  for (const b of answers) read += b.length;
  // in place where the written records are most of what the reads kept (always their copies)
  const kept = 8 * total >= 7 * read ? undefined : new Uint8Array(total);
  let at = 0;
  for (let s = 0; s < w.count; s++) {
    if (answerOf[s] === 0) continue;
    // built again from what is kept, as they would be had nothing asked for them yet
    w.records[s] = undefined;
    w.visible[s] = undefined;
    const buf = answers[answerOf[s]! - 1]!;
    const end = ends[s]!;
    if (kept === undefined) {
      if (cuts[s] === 1) buf[end - 1] = 0;
      continue;
    }
    const from = answerAt[s]!;
    kept.set(buf.subarray(from, end), at);
    answerOf[s] = 1;
    answerAt[s] = at;
    at += end - from;
    if (cuts[s] === 1) kept[at - 1] = 0;
  }
  if (kept === undefined) return;
  w.answers = [kept];
  w.answerViews = [new DataView(kept.buffer)];
}

/** The version of a slot's record visible at the insertion's epoch (spec 9.2), if any. */
export function slotVisible(w: Walk, slot: number, keep = true): TreeNode | undefined {
  let node = w.visible[slot];
  if (node !== undefined || !w.bytes) return node;
  const record = slotRecord(w, slot, keep);
  node = record === undefined ? undefined : nodeAtEpoch(record, w.epoch);
  if (keep) w.visible[slot] = node;
  return node;
}

/** A slot for the node labelled by the 34 bytes at `at` of `src` (a parent's child label). */
function addSlotFromBytes(
  w: Walk,
  src: Uint8Array,
  view: DataView,
  at: number,
  lo: number,
  hi: number,
  parentEpoch: number,
): number {
  // the child's write epoch follows its label (record-codec.ts, CHILD_BYTES)
  const recorded = recordedNumber(u64Number(src, at + LABEL_BYTES));
  const slot = takeSlot(w, lo, hi, parentEpoch, recorded);
  const a = w.arena;
  a.lens[slot] = (src[at]! << 8) | src[at + 1]!;
  copyWords(a.labelWords, 8 * slot, view, at + 2);
  return slot;
}

/** The labels of `slots` in the codec's form (u16 len || 32 bytes), a word at a time. */
function askedLabels(w: Walk, slots: number[]): Uint8Array {
  const a = w.arena;
  const asked = new Uint8Array(LABEL_BYTES * slots.length);
  const view = new DataView(asked.buffer);
  const words = a.labelWords;
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i]!;
    const o = LABEL_BYTES * i;
    view.setUint16(o, a.lens[s]!);
    for (let k = 0; k < 8; k++) view.setInt32(o + 2 + 4 * k, words[8 * s + k]!, LITTLE_ENDIAN);
  }
  return asked;
}

/**
 * The write epochs of the versions of `slots` their parents record, aligned with
 * `askedLabels`; undefined where one has none (a store of records reads by label anyway).
 */
function askedEpochs(w: Walk, slots: number[]): BigUint64Array | undefined {
  const epochs = recordedEpochs(w, slots);
  return epochs === undefined ? undefined : BigUint64Array.from(epochs);
}

/**
 * Reads the records of `frontier` in bytes, in reads of at most `maxBatchSize` labels: one
 * after another in a serial walk, all at once in a parallel one. Each read's nodes are
 * expanded onto `next` as soon as it answers, while the store's lookups have just brought
 * their records into the processor's caches: expanding a level only after all of its reads
 * found each record evicted by the thousands read since (a 200,000-label level is 200 reads).
 */
export async function fetchBytes(
  w: Walk,
  frontier: number[],
  parallel: boolean,
  next: number[],
): Promise<void> {
  const read = async (slots: number[]) => {
    const { buffers, buffer, starts } = await w.reader.readNodeBytes(
      askedLabels(w, slots),
      askedEpochs(w, slots),
    );
    if (starts.length !== slots.length || buffer.length !== slots.length) {
      throw new AkdError(
        'STORAGE_CORRUPT',
        `a read of ${slots.length} tree nodes answered for ${Math.min(starts.length, buffer.length)}`,
      );
    }
    // answers are numbered from 1 across the walk's reads (0: no record)
    const first = w.answers.length + 1;
    for (const b of buffers) {
      w.answers.push(b);
      w.answerViews.push(new DataView(b.buffer, b.byteOffset, b.byteLength));
    }
    for (let i = 0; i < slots.length; i++) {
      const b = buffer[i]!;
      if (b < 0) continue;
      if (b >= buffers.length) {
        throw new AkdError('STORAGE_CORRUPT', `a read of tree nodes answered with no buffer ${b}`);
      }
      const s = slots[i]!;
      w.answerOf[s] = first + b;
      w.answerAt[s] = starts[i]!;
    }
    // the walk's own work, not the read's: the pacing leaves it out of the read's vote
    const start = performance.now();
    for (const s of slots) if (w.answerOf[s] !== 0) expandFromBytes(w, s, next);
    keepRead(w, slots, first);
    w.collectGarbage?.();
    w.pacing.exclude(performance.now() - start);
  };
  await w.pacing.observe(() => readInChunks(frontier, w.maxBatchSize, parallel, w.stats, read));
}

/**
 * Checks the record at `at` of `buf` as `skipRecord` would, and that it is the slot's (the
 * label asked for), and returns where its previous version begins (-1: none).
 * @throws AkdError `STORAGE_CORRUPT` for anything else
 */
function checkRecord(w: Walk, slot: number, buf: Uint8Array, view: DataView, at: number): number {
  const a = w.arena;
  try {
    if (at + RECORD_LATEST > buf.length) throw new RangeError('truncated record bytes');
    if (buf[at] !== RECORD_KIND.treeNode) throw new RangeError('not a tree node record');
    let same = ((buf[at + 1]! << 8) | buf[at + 2]!) === a.lens[slot];
    for (let k = 0; k < 8 && same; k++) {
      same = view.getInt32(at + 3 + 4 * k, LITTLE_ENDIAN) === a.labelWords[8 * slot + k];
    }
    if (!same) throw new RangeError('the record of another label');
    const flag = at + RECORD_LATEST + nodeBytesLength(buf, at + RECORD_LATEST);
    if (flag >= buf.length) throw new RangeError('truncated record bytes');
    const previous = buf[flag]!;
    if (previous > 1) throw new RangeError('an unknown previous flag in record bytes');
    if (previous === 0) return -1;
    nodeBytesLength(buf, flag + 1);
    return flag + 1;
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    throw corrupt(slotLabel(w, slot), `was answered with bad bytes: ${e.message}`);
  }
}

/**
 * `epoch`, the u64 at `at` of `buf` as a double, where it is below 2^53: every epoch from
 * 2^53 up converts to 2^53 or more, so the check on the double is the check on the integer.
 * @throws AkdError `STORAGE_CORRUPT` for an epoch from 2^53 up
 */
function checked(w: Walk, slot: number, buf: Uint8Array, at: number, epoch = u64Number(buf, at)) {
  if (epoch <= Number.MAX_SAFE_INTEGER) return epoch;
  const shown = new ByteReader(buf, at).u64();
  throw corrupt(slotLabel(w, slot), `has an epoch beyond 2^53: ${shown}`);
}

/**
 * `expand` (load.ts) of a slot whose record was read in bytes: copies the record into the
 * arena, the stored copies (spec 9.2) and the version visible at the insertion's epoch, and
 * takes the slot's children onto `next` when some element lies under it.
 */
export function expandFromBytes(w: Walk, slot: number, next: number[]): void {
  const buf = w.answers[w.answerOf[slot]! - 1]!;
  const view = w.answerViews[w.answerOf[slot]! - 1]!;
  const at = w.answerAt[slot]!;
  const previous = checkRecord(w, slot, buf, view, at);
  const latest = at + RECORD_LATEST;
  const latestEpoch = u64Number(buf, latest + NODE_FIELD.lastEpoch);
  const previousEpoch = previous < 0 ? 0 : u64Number(buf, previous + NODE_FIELD.lastEpoch);
  let a = w.arena;
  a.storedLatest[slot] = Copy.Latest;
  a.storedLatestEpoch[slot] = latestEpoch;
  if (previous >= 0) {
    a.storedPrevious[slot] = Copy.Previous;
    a.storedPreviousEpoch[slot] = previousEpoch;
  }
  const epoch = w.epochNumber;
  const node =
    latestEpoch <= epoch ? latest : previous >= 0 && previousEpoch <= epoch ? previous : -1;
  if (node < 0) return;
  const type = buf[node + NODE_FIELD.type]!;
  a.types[slot] = type;
  const lastEpoch = checked(
    w,
    slot,
    buf,
    node + NODE_FIELD.lastEpoch,
    node === latest ? latestEpoch : previousEpoch,
  );
  a.lastEpoch[slot] = lastEpoch;
  a.minEpoch[slot] = checked(w, slot, buf, node + NODE_FIELD.minEpoch);
  copyWords(a.hashWords, 8 * slot, view, nodeHashAt(buf, node));
  if (lastEpoch > w.parentEpoch[slot]!) {
    // newer than its parent (spec 9.2): its record's earlier version may be read below it
    reserve(w, 0, 1);
    const alt = w.alts++;
    a = w.arena;
    a.alt[slot] = alt;
    if (node === latest && previous >= 0) {
      a.altType[alt] = buf[previous + NODE_FIELD.type]!;
      a.altEpoch[alt] = checked(w, slot, buf, previous + NODE_FIELD.lastEpoch, previousEpoch);
      copy32(a.altHashes, 32 * alt, buf, nodeHashAt(buf, previous));
    }
  }
  const children = buf[node + NODE_FIELD.children]!;
  const len = a.lens[slot]!;
  const [lo, hi] =
    type === NodeType.Leaf
      ? [0, 0]
      : rangeBelow(w.el, w.lo[slot]!, w.hi[slot]!, a.labels, 32 * slot, len);
  if (lo === hi) {
    // not expanded: its children stay unread, their labels in the record
    if ((children & 1) !== 0) a.left[slot] = UNLOADED;
    if ((children & 2) !== 0) a.right[slot] = UNLOADED;
    return;
  }
  const mid = splitIndex(w.el, lo, hi, len);
  let child = node + NODE_FIELD.child;
  if ((children & 1) !== 0) {
    const s = addSlotFromBytes(w, buf, view, child, lo, mid, lastEpoch);
    w.arena.left[slot] = s;
    next.push(s);
    child += CHILD_BYTES;
  }
  if ((children & 2) !== 0) {
    const s = addSlotFromBytes(w, buf, view, child, mid, hi, lastEpoch);
    w.arena.right[slot] = s;
    next.push(s);
  }
}
