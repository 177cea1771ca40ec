/**
 * The VRF proofs a publish stores (stored-proofs.ts): each new version's existence proof with
 * its commitment nonce, its freshness proof and its future markers up to the publish's
 * horizon; and the walk of the markers the sweeps add ahead of need (marker-sweeps.ts).
 *
 * The existence proof of a version after the first is, as a rule, already stored: the VRF
 * input (Fresh, v) is the previous version's first future marker (spec 10.4). Such a proof is
 * read back, not proved again, and written with the nonce it now gets: one of the three or
 * four proofs an update of a label stores.
 */

import type { Database, ValueStateRecord, VrfProofRecord } from '@akd-ts/storage';
import { vrfProofMapKey } from '@akd-ts/storage';
import type { DirectoryContext } from '../context.js';
import type { VrfJob } from './engine.js';
import { sweepWork, sweepsFrom, type SweepWork } from './marker-sweeps.js';
import { markerHorizon, proofKey, publishProofJobs } from './stored-proofs.js';
import { toHex } from '@akd-ts/core';
import type { EarlyProofMap } from './early-proofs.js';

export interface PublishProofs {
  /** The VRF proofs to store, and the nonce of each job that has one (by job index). */
  proofJobs: VrfJob[];
  nonces: Map<number, Uint8Array>;
  /** Existence proofs the store already held, with the nonces their versions now get. */
  stored: VrfProofRecord[];
  /**
   * The marker sweeps' share, walked as it is proved (marker-sweeps.ts), with the positions
   * to record once the epoch committed; undefined where the store runs no sweeps.
   */
  sweeps: SweepWork | undefined;
}

/**
 * The proofs to store with the versions `states` a publish of `epoch` adds. Proofs in `early`
 * (early-proofs.ts) are not read from the store: an existence proof found there is stored
 * again with its nonce, a marker found there is stored again as it is (a future version's
 * marker, which has no nonce yet).
 */
export async function planPublishProofs(
  ctx: DirectoryContext,
  states: ValueStateRecord[],
  epoch: bigint,
  early: EarlyProofMap = new Map(),
): Promise<PublishProofs> {
  const { storage, config, commitmentKey } = ctx;
  const db = storage.db;
  const from = await sweepsFrom(db);
  const horizon = markerHorizon(epoch, from);
  const proofJobs: VrfJob[] = [];
  const nonces = new Map<number, Uint8Array>();
  const unlessStored: VrfJob[] = [];
  // existence proofs that were stored as markers of the previous version, with their nonces
  const existing: { job: VrfJob; nonce: Uint8Array }[] = [];
  for (const s of states) {
    const part = publishProofJobs(s.username, s.version, horizon);
    // the first job is the existence proof, whose record carries the nonce; its node label,
    // the version's, finds what the engine kept of its evaluation (VrfJob.keep)
    const [existence, ...rest] = part.jobs;
    existence!.nodeLabel = s.label;
    const nonce = config.getCommitmentNonce(commitmentKey, s.label, s.version, s.value);
    if (s.version > 1n && !early.has(vrfProofMapKey(existence!))) {
      existing.push({ job: existence!, nonce });
    } else {
      nonces.set(proofJobs.length, nonce);
      proofJobs.push(existence!);
    }
    proofJobs.push(...rest);
    for (const job of part.unlessStored) {
      if (early.has(vrfProofMapKey(job))) proofJobs.push(job);
      else unlessStored.push(job);
    }
  }
  // one read for both: the existence proofs to reuse and the markers to prove unless stored
  const found = await storedProofs(db, [...existing.map((e) => e.job), ...unlessStored]);
  const stored: VrfProofRecord[] = [];
  for (const { job, nonce } of existing) {
    const r = found.get(vrfProofMapKey(job));
    if (r !== undefined) stored.push({ ...proofKey(job), proof: r.proof, nonce });
    else {
      // a store whose markers were never stored, or a version that skipped one
      nonces.set(proofJobs.length, nonce);
      proofJobs.push(job);
    }
  }
  for (const job of unlessStored) if (!found.has(vrfProofMapKey(job))) proofJobs.push(job);
  if (from === undefined) return { proofJobs, nonces, stored, sweeps: undefined };
  const record = await ctx.azks.read(storage);
  // every label has a leaf, so half the node count (plus one) bounds the labels from above
  const labels = record.numNodes / 2n + 1n;
  const updated = new Set(states.map((s) => toHex(s.username)));
  return { proofJobs, nonces, stored, sweeps: sweepWork(db, from, epoch, labels, updated) };
}

/** The stored proofs of `jobs`, by `vrfProofMapKey`, in one read (none for no jobs). */
async function storedProofs(db: Database, jobs: VrfJob[]): Promise<Map<string, VrfProofRecord>> {
  const found = new Map<string, VrfProofRecord>();
  if (jobs.length === 0) return found;
  for (const r of await db.getVrfProofs(jobs.map(proofKey))) found.set(vrfProofMapKey(r), r);
  return found;
}
