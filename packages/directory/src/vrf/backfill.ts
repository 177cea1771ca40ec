/**
 * Stored VRF proofs for a store written before publishes stored them: a one-off walk over
 * every label (in the byte order `Database.listUsernames` gives), storing the proofs and
 * nonces of all its versions as a publish would have. The walk is resumable: after each batch
 * of labels it records the last one done in a setting, and a later run starts after it. Once
 * it reaches the end, the store is marked as holding the proofs of every version, and marker
 * sweeps start from its latest epoch (marker-sweeps.ts): until then, publishes store every
 * marker of their versions.
 */

import { VersionFreshness, fromHex, toHex } from '@akd-ts/core';
import type { ValueStateRecord } from '@akd-ts/storage';
import type { DirectoryContext } from '../context.js';
import type { VrfJob } from './engine.js';
import { SWEEPS_FROM_SETTING } from './marker-sweeps.js';
import { VRF_PROOFS_THROUGH_SETTING, proveRecords } from './epoch-proofs.js';
import { VRF_PROOFS_COMPLETE, VRF_PROOFS_SETTING, allFutureMarkers } from './stored-proofs.js';

/** The setting holding the hex of the last label a backfill finished (resuming point). */
export const BACKFILL_CURSOR_SETTING = 'vrf_proofs_backfill_after';

export interface BackfillOptions {
  /** Labels per batch: one storage write and one setting each (default 1,000). */
  batch?: number;
  /** Hears the labels done so far in this run and the last label done. */
  onProgress?: (done: number, last: Uint8Array) => void;
  /** Stops after the current batch (the next run resumes after it). */
  signal?: AbortSignal;
}

/** The records a label's published `states` need stored (as their publishes store them). */
function recordsOf(
  ctx: DirectoryContext,
  label: Uint8Array,
  states: ValueStateRecord[],
): { jobs: VrfJob[]; nonces: (Uint8Array | undefined)[] } {
  const jobs: VrfJob[] = [];
  const nonces: (Uint8Array | undefined)[] = [];
  const markers = new Set<bigint>();
  const fresh = new Set<bigint>();
  for (const s of states) {
    jobs.push({ label, freshness: VersionFreshness.Fresh, version: s.version });
    nonces.push(ctx.config.getCommitmentNonce(ctx.commitmentKey, s.label, s.version, s.value));
    jobs.push({ label, freshness: VersionFreshness.Stale, version: s.version });
    nonces.push(undefined);
    fresh.add(s.version);
    for (const m of allFutureMarkers(s.version)) markers.add(m);
  }
  for (const m of markers) {
    if (fresh.has(m)) continue; // a published version: its proof carries its nonce above
    jobs.push({ label, freshness: VersionFreshness.Fresh, version: m });
    nonces.push(undefined);
  }
  return { jobs, nonces };
}

/**
 * Walks the store from the saved cursor and stores every label's proofs.
 * @returns labels done in this run and whether the walk reached the end.
 * @throws TypeError when the store cannot list its labels, or the writer stores no proofs
 */
export async function backfillVrfProofs(
  ctx: DirectoryContext,
  options: BackfillOptions = {},
): Promise<{ labels: number; complete: boolean }> {
  const db = ctx.storage.db;
  if (!ctx.storeVrfProofs) {
    throw new TypeError('a backfill marks the store complete: open the writer with storeVrfProofs');
  }
  if (db.listUsernames === undefined) {
    throw new TypeError('this store cannot list its labels, which a backfill walks');
  }
  const batch = options.batch ?? 1_000;
  if (!Number.isSafeInteger(batch) || batch < 1) throw new RangeError('batch must be >= 1');
  const cursor = await db.getSetting(BACKFILL_CURSOR_SETTING);
  let after = cursor === undefined || cursor === '' ? undefined : fromHex(cursor);
  let done = 0;
  for (;;) {
    if (options.signal?.aborted) return { labels: done, complete: false };
    const labels = await db.listUsernames(after, batch);
    if (labels.length === 0) break;
    const jobs: VrfJob[] = [];
    const nonces: (Uint8Array | undefined)[] = [];
    for (const label of labels) {
      const states = await db.getUserData(label);
      const part = recordsOf(ctx, label, states);
      jobs.push(...part.jobs);
      nonces.push(...part.nonces);
    }
    await db.setVrfProofs(await proveRecords(ctx, jobs, (i) => nonces[i]));
    after = labels[labels.length - 1]!;
    await db.setSetting(BACKFILL_CURSOR_SETTING, toHex(after));
    done += labels.length;
    options.onProgress?.(done, after);
  }
  // every version so far holds all its markers (publishes store them all until sweeps start)
  const { latestEpoch } = await ctx.azks.read(ctx.storage);
  await db.setSetting(SWEEPS_FROM_SETTING, latestEpoch.toString());
  await db.setSetting(VRF_PROOFS_THROUGH_SETTING, latestEpoch.toString());
  await db.setSetting(VRF_PROOFS_SETTING, VRF_PROOFS_COMPLETE);
  await db.setSetting(BACKFILL_CURSOR_SETTING, '');
  return { labels: done, complete: true };
}
