/**
 * Key history proof assembly (spec 10.4, 12.5): the label's versions published up to the
 * latest epoch (all of them, or the most recent n), newest first, each with its existence and
 * stale-leaf proofs, then the past-marker and future-marker proofs.
 */

import {
  AkdError,
  isAkdError,
  VersionFreshness,
  getMarkerVersions,
  describeLabel,
  type AkdLabel,
  type HistoryParams,
  type HistoryProof,
  type UpdateProof,
} from '@akd-ts/core';
import type { ValueStateRecord } from '@akd-ts/storage';
import { commitmentNonces, preloadedPaths, type DirectoryContext } from '../context.js';
import { nonceOf } from '../vrf/stored-proofs.js';
import { labelNotFound } from './lookup-proof.js';
import type { VrfJob } from '../vrf/engine.js';

/** The states a history at `epoch` covers, newest first (spec 10.4 steps 1-3). */
async function historyStates(
  ctx: DirectoryContext,
  label: AkdLabel,
  params: HistoryParams,
  epoch: bigint,
): Promise<ValueStateRecord[]> {
  let states: ValueStateRecord[];
  try {
    states = await ctx.storage.getUserData(label);
  } catch (e) {
    if (isAkdError(e, 'STORAGE_NOT_FOUND')) throw labelNotFound(label, epoch);
    throw e;
  }
  // states past the epoch belong to a publish this reader does not see yet
  const visible = states
    .filter((s) => s.epoch <= epoch)
    .sort((a, b) => (a.epoch > b.epoch ? -1 : 1));
  if (params.kind === 'mostRecent' && (!Number.isSafeInteger(params.count) || params.count < 0)) {
    throw new RangeError('mostRecent count must be a non-negative integer');
  }
  const kept = params.kind === 'complete' ? visible : visible.slice(0, params.count);
  if (kept.length === 0) throw labelNotFound(label, epoch);
  return kept;
}

/** The history proof of `label` against the tree at `epoch`. */
export async function buildHistoryProof(
  ctx: DirectoryContext,
  label: AkdLabel,
  params: HistoryParams,
  epoch: bigint,
): Promise<HistoryProof> {
  const states = await historyStates(ctx, label, params, epoch);
  const versions = states.map((s) => s.version);
  const start = versions[versions.length - 1]!;
  const end = versions[0]!;
  if (start === 0n || end === 0n) {
    throw new AkdError(
      'DIRECTORY_INVALID_VERSION',
      `label ${describeLabel(label)} has a version 0`,
    );
  }
  const { past, future } = getMarkerVersions(start, end, epoch);

  const job = (freshness: VersionFreshness, version: bigint): VrfJob => ({
    label,
    freshness,
    version,
  });
  const jobs: VrfJob[] = [
    // each state keeps its version's label: no proof-to-hash for these
    ...states.map((s) => ({ ...job(VersionFreshness.Fresh, s.version), nodeLabel: s.label })),
    ...states.filter((s) => s.version > 1n).map((s) => job(VersionFreshness.Stale, s.version - 1n)),
    ...past.map((v) => job(VersionFreshness.Fresh, v)),
    ...future.map((v) => job(VersionFreshness.Fresh, v)),
  ];
  const vrf = await ctx.vrf.proofs(jobs);
  // the preload runs before any proof is built (the ordering fixed upstream in PR #441)
  const reader = await preloadedPaths(
    ctx,
    vrf.map((v) => v.nodeLabel),
    epoch,
  );

  let next = 0;
  const take = () => vrf[next++]!;
  const fresh = states.map(() => take());
  const stale = new Map(states.filter((s) => s.version > 1n).map((s) => [s.version, take()]));
  const updateProofs: UpdateProof[] = [];
  for (let i = 0; i < states.length; i++) {
    const s = states[i]!;
    const previous = stale.get(s.version);
    updateProofs.push({
      epoch: s.epoch,
      value: s.value,
      version: s.version,
      existenceVrfProof: fresh[i]!.proof,
      existenceProof: await ctx.azks.membershipProof(reader, fresh[i]!.nodeLabel, epoch),
      previousVersionVrfProof: previous?.proof,
      previousVersionProof:
        previous && (await ctx.azks.membershipProof(reader, previous.nodeLabel, epoch)),
      commitmentNonce: nonceOf(commitmentNonces(ctx, s), fresh[i]!, jobs[i]!),
    });
  }
  const proof: HistoryProof = {
    updateProofs,
    pastMarkerVrfProofs: [],
    existenceOfPastMarkerProofs: [],
    futureMarkerVrfProofs: [],
    nonExistenceOfFutureMarkerProofs: [],
  };
  for (let i = 0; i < past.length; i++) {
    const p = take();
    proof.pastMarkerVrfProofs.push(p.proof);
    proof.existenceOfPastMarkerProofs.push(
      await ctx.azks.membershipProof(reader, p.nodeLabel, epoch),
    );
  }
  for (let i = 0; i < future.length; i++) {
    const f = take();
    proof.futureMarkerVrfProofs.push(f.proof);
    proof.nonExistenceOfFutureMarkerProofs.push(
      await ctx.azks.nonMembershipProof(reader, f.nodeLabel, epoch),
    );
  }
  return proof;
}
