/**
 * The VRF proofs a publish stores (stored-proofs.ts): each new version's existence proof with
 * its commitment nonce, its freshness proof and its future markers up to the publish's
 * horizon, then the markers the sweeps add ahead of need (marker-sweeps.ts).
 */

import type { ValueStateRecord } from '@akd-ts/storage';
import { vrfProofMapKey } from '@akd-ts/storage';
import type { DirectoryContext } from '../context.js';
import type { VrfJob } from './engine.js';
import { sweepWork, sweepsFrom } from './marker-sweeps.js';
import { markerHorizon, proofKey, publishProofJobs } from './stored-proofs.js';
import { appendAll, toHex } from '@akd-ts/core';

export interface PublishProofs {
  /** The VRF proofs to store, and the nonce of each job that has one (by job index). */
  proofJobs: VrfJob[];
  nonces: Map<number, Uint8Array>;
  /** Marker sweep positions to record once the epoch committed. */
  sweepPositions: Map<string, string>;
}

/** The proofs to store with the versions `states` a publish of `epoch` adds. */
export async function planPublishProofs(
  ctx: DirectoryContext,
  states: ValueStateRecord[],
  epoch: bigint,
): Promise<PublishProofs> {
  const { storage, config, commitmentKey } = ctx;
  const db = storage.db;
  const from = await sweepsFrom(db);
  const horizon = markerHorizon(epoch, from);
  const proofJobs: VrfJob[] = [];
  const nonces = new Map<number, Uint8Array>();
  const unlessStored: VrfJob[] = [];
  for (const s of states) {
    const part = publishProofJobs(s.username, s.version, horizon);
    // the first job is the existence proof, whose record carries the nonce
    nonces.set(
      proofJobs.length,
      config.getCommitmentNonce(commitmentKey, s.label, s.version, s.value),
    );
    proofJobs.push(...part.jobs);
    unlessStored.push(...part.unlessStored);
  }
  if (unlessStored.length > 0) {
    const have = new Set((await db.getVrfProofs(unlessStored.map(proofKey))).map(vrfProofMapKey));
    for (const job of unlessStored) if (!have.has(vrfProofMapKey(job))) proofJobs.push(job);
  }
  if (from === undefined) return { proofJobs, nonces, sweepPositions: new Map() };
  const record = await ctx.azks.read(storage);
  // every label has a leaf, so half the node count (plus one) bounds the labels from above
  const labels = record.numNodes / 2n + 1n;
  const updated = new Set(states.map((s) => toHex(s.username)));
  const sweeps = await sweepWork(db, from, epoch, labels, updated);
  // a sweep can plan a proof for every label: too many to spread as arguments
  appendAll(proofJobs, sweeps.jobs);
  return { proofJobs, nonces, sweepPositions: sweeps.positions };
}
