/**
 * The stored VRF proofs of an epoch, written after the epoch commits. A publish commits its
 * tree, value states and audit blob first, so the epoch is final (and served by every process
 * that holds the key) without waiting for its VRF proofs, which cost several times the rest
 * of the publish. The writer then proves and stores them and moves the store's mark
 * `VRF_PROOFS_THROUGH_SETTING` to the epoch. Processes without the key serve the marked epoch,
 * never a later one, so they never lack a proof the epoch needs.
 *
 * The mark is at most one epoch behind: a publish first finishes the proofs still owed (those
 * of a write that failed, or of a writer that stopped after its commit), so the tree always
 * still holds the nodes a proof at the marked epoch reads (each node keeps its previous
 * version). Owed proofs are found again from the store: the value states published at an
 * owed epoch, by a walk over the labels (`Database.listUsernames`), one batched read of
 * their states at that epoch per page. A store that cannot list its labels writes an epoch's
 * proofs before it commits instead, as before.
 */

import {
  labelChars,
  readEpochSetting,
  vrfProofMapKey,
  type Database,
  type ValueStateRecord,
  type VrfProofRecord,
} from '@akd-ts/storage';
import { setImmediate } from 'node:timers/promises';
import type { DirectoryContext } from '../context.js';
import type { VrfJob } from './engine.js';
import { planPublishProofs } from './publish-proofs.js';
import { heapGrowthCollector } from '../release-memory.js';
import type { EarlyProofs } from './early-proofs.js';

/**
 * The store setting holding the latest epoch whose published versions all have their VRF
 * proofs stored (decimal). Absent or empty: every published epoch has them, or the store's
 * writers do not keep the mark (readers then serve the latest epoch).
 */
export const VRF_PROOFS_THROUGH_SETTING = 'vrf_proofs_through';

/** Labels per storage read when a walk looks for the states of an owed epoch. */
const PAGE = 10_000;
/** Proofs per engine call and storage write when an epoch's proofs are stored. */
const CHUNK = 16_384;

/**
 * The marked epoch, or undefined where the store keeps no mark.
 * @throws AkdError `STORAGE_CORRUPT` for a setting that is not a decimal epoch
 */
export async function proofsThrough(db: Database): Promise<bigint | undefined> {
  return readEpochSetting(db, VRF_PROOFS_THROUGH_SETTING);
}

/** Whether this store's epochs get their proofs after they commit (it can list its labels). */
export function defersProofs(ctx: DirectoryContext): boolean {
  return ctx.storeVrfProofs && ctx.storage.db.listUsernames !== undefined;
}

/** The records of `jobs`, their proofs computed by the engine; `nonce(i)` is job i's nonce. */
export async function proveRecords(
  ctx: DirectoryContext,
  jobs: VrfJob[],
  nonce: (i: number) => Uint8Array | undefined,
): Promise<VrfProofRecord[]> {
  const proofs = await startProofs(ctx, jobs);
  return jobs.map((job, i) => proofRecord(job, proofs[i]!, nonce(i)));
}

/**
 * The proofs of `jobs`, under way: a worker engine's threads each hold up to two of its tasks
 * (engine.ts `LANES_PER_THREAD`) and take the second without this thread's event loop, so
 * they go on proving while this thread stores. An engine without threads proves on this
 * thread as it goes. The promise never rejects unheard: a failure waits for the caller's
 * await.
 */
function startProofs(ctx: DirectoryContext, jobs: VrfJob[]): Promise<Uint8Array[]> {
  const vrf = ctx.vrf;
  let proofs: Promise<Uint8Array[]>;
  if (jobs.length === 0) proofs = Promise.resolve([]);
  else if (vrf.proofBytes) proofs = vrf.proofBytes(jobs);
  else proofs = vrf.proofs(jobs).then((proved) => proved.map((p) => p.proof));
  // awaited only after the store of the chunk before: a failure that comes first waits there
  proofs.catch(() => undefined);
  return proofs;
}

/** The record of `job`'s proof, with its nonce where it has one. */
function proofRecord(
  job: VrfJob,
  proof: Uint8Array,
  nonce: Uint8Array | undefined,
): VrfProofRecord {
  // a literal, not a spread of proofKey's: a few hundred thousand per epoch
  const record: VrfProofRecord = {
    label: job.label,
    freshness: job.freshness,
    version: job.version,
    proof,
  };
  if (nonce !== undefined) record.nonce = nonce;
  return record;
}

/**
 * The order an epoch's proofs are stored in: by label (as the SQL drivers key their rows,
 * @akd-ts/storage vrf-proof-rows.ts), a label's proofs in the order they came. A label's
 * proofs of the epoch are then neighbours, in one chunk and so in one row (the chunk's last
 * label aside). Labels compare as `labelChars` strings, one character per byte: byte order,
 * at the cost of a native string comparison (an epoch sorts hundreds of thousands).
 */
function labelOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Records how far the marker sweeps got, once their proofs are stored. A position not written
 * only makes the next epoch walk the same labels again, so a failure here is nobody's.
 */
async function recordSweeps(db: Database, positions: Map<string, string>): Promise<void> {
  try {
    for (const [name, value] of positions) await db.setSetting(name, value);
  } catch {
    // the next publish repeats the walk from the last recorded position
  }
}

/** A chunk of an epoch's proofs to store (`proveEpoch`). */
interface Chunk {
  /** Each entry's record, or undefined for the next of `toProve`'s. */
  records: (VrfProofRecord | undefined)[];
  toProve: VrfJob[];
  /** The nonce of each of `toProve`. */
  nonceOf: (Uint8Array | undefined)[];
  /** The proofs of `toProve`, under way. */
  proofs: Promise<Uint8Array[]>;
}

/** How `proveEpoch` goes about it. */
export interface ProveEpochOptions {
  /** Proofs per engine call and storage write (default 16,384). */
  chunk?: number;
  /**
   * Called after each chunk is stored: each leaves its jobs, proofs and records behind, which
   * V8 promotes (they live across the engine's await) and would keep until its heap's next
   * limit, a hundred megabytes and more above what is live during a sweep of a million
   * labels (default `heapGrowthCollector`, where the process exposes `gc`).
   */
  collect?: () => unknown;
  /**
   * Proofs computed while the epoch was published (early-proofs.ts), not proved again: their
   * proving goes on while the proofs to store are planned, and stops before the rest are
   * proved.
   */
  early?: Pick<EarlyProofs, 'made' | 'stop'>;
}

/**
 * Proves and stores what committed `epoch` publishing `states` needs (publish-proofs.ts: the
 * versions' proofs and the marker sweeps' share) and moves the mark to it, unless `mayWrite`
 * says no once they are computed (the writer lost its lock: the mark must not move behind
 * what a writer after it stored). Proofs are a function of their key and each version's
 * nonce is written again whole, so a repeated or interrupted run leaves nothing wrong behind.
 */
export async function proveEpoch(
  ctx: DirectoryContext,
  epoch: bigint,
  states: ValueStateRecord[],
  mayWrite: () => boolean = () => true,
  options: ProveEpochOptions = {},
): Promise<void> {
  const { chunk = CHUNK, collect = heapGrowthCollector() } = options;
  const db = ctx.storage.db;
  const early = options.early?.made ?? new Map<string, Uint8Array>();
  // a turn of the event loop first: the idle threads' proofs of the commit's seconds (a
  // synchronous SQLite commit hears none) reach `early`, and the plan reads none of them back
  if (options.early !== undefined) await setImmediate();
  const plan = await planPublishProofs(ctx, states, epoch, early);
  // what the idle threads made up to here stays in `early`: the rest is proved at the
  // default priority, and both proving the same jobs would take cores from each other
  await options.early?.stop();
  const { proofJobs: jobs, nonces, stored } = plan;
  // a chunk at a time, in label order (`labelOrder`): the writer holds two chunks' records
  // (the one it stores, the one proved ahead), not the epoch's (hundreds of thousands), a
  // label's proofs share a row, and as each chunk's rows land on pages of their own, writing
  // them in several statements rewrites few pages twice. What the store already held goes in
  // the same order, with nothing to prove: entry i is stored[i] below stored.length, else job
  // i - stored.length. The sweeps' proofs, walked a page of labels at a time, come in label
  // order too and are merged in as they come (a sweep skips the labels the epoch publishes,
  // so the two never share a label).
  const held = stored.length;
  const labelOf = Array.from({ length: held + jobs.length }, (_, i) =>
    labelChars(i < held ? stored[i]!.label : jobs[i - held]!.label),
  );
  // a stable sort: each label's proofs keep the order they came in
  const order = Array.from(labelOf, (_, i) => i).sort((a, b) =>
    labelOrder(labelOf[a]!, labelOf[b]!),
  );
  const swept = plan.sweeps?.pages();
  let page: VrfJob[] = [];
  let inPage = 0;
  /** The next sweep proof to store, if any is left (reading the next page when needed). */
  const nextSwept = async (): Promise<VrfJob | undefined> => {
    while (inPage === page.length) {
      const next = swept === undefined ? undefined : await swept.next();
      if (next === undefined || next.done === true) return undefined;
      page = next.value;
      inPage = 0;
    }
    return page[inPage];
  };
  let at = 0;
  /**
   * The next chunk, its proofs handed to the engine: own entries (numbers, as in `order`) and
   * sweep jobs, merged by key, each with its record where nothing is to prove.
   */
  const nextChunk = async (): Promise<Chunk | undefined> => {
    const part: (number | VrfJob)[] = [];
    while (part.length < chunk) {
      // a page's proofs are taken without awaiting: only the next page is read
      const sweep = inPage < page.length ? page[inPage] : await nextSwept();
      const own = at < order.length ? order[at]! : undefined;
      if (sweep === undefined && own === undefined) break;
      if (
        own !== undefined &&
        (sweep === undefined || labelOrder(labelOf[own]!, labelChars(sweep.label)) <= 0)
      ) {
        part.push(own);
        at++;
      } else {
        part.push(sweep!);
        inPage++;
      }
    }
    if (part.length === 0) return undefined;
    const toProve: VrfJob[] = [];
    const nonceOf: (Uint8Array | undefined)[] = [];
    // each entry's record, or undefined for the next of `toProve`'s
    const records = part.map((e): VrfProofRecord | undefined => {
      if (typeof e === 'number' && e < held) return stored[e]!;
      const job = typeof e === 'number' ? jobs[e - held]! : e;
      const nonce = typeof e === 'number' ? nonces.get(e - held) : undefined;
      const proof = early.get(vrfProofMapKey(job));
      if (proof !== undefined) return proofRecord(job, proof, nonce);
      toProve.push(job);
      nonceOf.push(nonce);
      return undefined;
    });
    return { records, toProve, nonceOf, proofs: startProofs(ctx, toProve) };
  };
  // a chunk ahead: the next chunk's proofs are under way before this thread stores the
  // current one, so the engine's threads go on proving through the store
  let current = await nextChunk();
  while (current !== undefined) {
    const { records, toProve, nonceOf } = current;
    const ahead = await nextChunk();
    const proofs = await current.proofs;
    if (!mayWrite()) return;
    let next = 0;
    await db.setVrfProofs(
      records.map((r) => {
        if (r !== undefined) return r;
        const k = next++;
        return proofRecord(toProve[k]!, proofs[k]!, nonceOf[k]);
      }),
    );
    collect?.();
    current = ahead;
  }
  if (!mayWrite()) return;
  await db.setSetting(VRF_PROOFS_THROUGH_SETTING, epoch.toString());
  await recordSweeps(db, plan.sweeps?.positions ?? new Map<string, string>());
}

/** The value states published at `epoch`, found by a walk over every label, `page` at a time. */
export async function statesPublishedAt(
  db: Database,
  epoch: bigint,
  page = PAGE,
): Promise<ValueStateRecord[]> {
  const states: ValueStateRecord[] = [];
  let after: Uint8Array | undefined;
  for (;;) {
    const labels = await db.listUsernames!(after, page);
    if (labels.length === 0) break;
    const found = await db.batchGet(
      labels.map((username) => ({ kind: 'valueState' as const, username, epoch })),
    );
    for (const r of found) if (r.kind === 'valueState') states.push(r);
    after = labels[labels.length - 1];
    if (labels.length < page) break;
  }
  return states;
}

/**
 * Proves and stores what the epochs after the mark still owe, oldest first, while `mayWrite`
 * says the writer still holds its lock (asked before each epoch and by `proveEpoch`).
 * @returns the epochs caught up (0 when nothing was owed).
 */
export async function catchUpProofs(
  ctx: DirectoryContext,
  mayWrite: () => boolean = () => true,
): Promise<number> {
  if (!defersProofs(ctx)) return 0;
  const db = ctx.storage.db;
  const mark = await proofsThrough(db);
  if (mark === undefined) return 0;
  const { latestEpoch } = await ctx.azks.read(ctx.storage);
  let done = 0;
  for (let epoch = mark + 1n; epoch <= latestEpoch && mayWrite(); epoch++) {
    await proveEpoch(ctx, epoch, await statesPublishedAt(db, epoch), mayWrite);
    done++;
  }
  return done;
}
