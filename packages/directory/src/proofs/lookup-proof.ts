/**
 * Lookup proof assembly (spec 10.3, 12.3, 12.4): the latest version of each label as of the
 * latest epoch, with its existence, marker and freshness proofs, after one serial preload of
 * every path involved.
 */

import {
  AkdError,
  describeLabel,
  isAkdError,
  VersionFreshness,
  markerVersion,
  type AkdLabel,
  type LookupProof,
} from '@akd-ts/core';
import type { ValueStateRecord } from '@akd-ts/storage';
import { commitmentNonces, preloadedPaths, type DirectoryContext } from '../context.js';
import type { VrfJob } from '../vrf/engine.js';
import { nonceOf } from '../vrf/stored-proofs.js';

const Fresh = VersionFreshness.Fresh;

/** `DIRECTORY_LABEL_NOT_FOUND` for a label with no value at `epoch` (lookups and histories). */
export function labelNotFound(label: AkdLabel, epoch: bigint): AkdError {
  return new AkdError(
    'DIRECTORY_LABEL_NOT_FOUND',
    `label ${describeLabel(label)} has no value at epoch ${epoch}`,
  );
}

/** The state a lookup at `epoch` proves, or `DIRECTORY_LABEL_NOT_FOUND`. */
export async function lookupState(
  ctx: DirectoryContext,
  label: AkdLabel,
  epoch: bigint,
): Promise<ValueStateRecord> {
  try {
    return await ctx.storage.getUserState(label, { kind: 'leqEpoch', epoch });
  } catch (e) {
    if (!isAkdError(e, 'STORAGE_NOT_FOUND')) throw e;
    throw labelNotFound(label, epoch);
  }
}

/** Lookup proofs of `labels` against the tree at `epoch`, in input order. */
export async function buildLookupProofs(
  ctx: DirectoryContext,
  labels: AkdLabel[],
  epoch: bigint,
): Promise<LookupProof[]> {
  // one read at a time: a lookup never holds more than one storage read in flight
  const states: ValueStateRecord[] = [];
  for (const label of labels) states.push(await lookupState(ctx, label, epoch));
  // per state: the existence job (its label known from the state), the marker's unless it
  // is the version itself (a power of two, version 1 among them), and the freshness job
  const jobs: VrfJob[] = [];
  const add = (job: VrfJob) => jobs.push(job) - 1;
  const at = states.map((s, i) => {
    const label = labels[i]!;
    const marker = markerVersion(s.version);
    const existence = add({ label, freshness: Fresh, version: s.version, nodeLabel: s.label });
    return {
      existence,
      marker: marker === s.version ? existence : add({ label, freshness: Fresh, version: marker }),
      freshness: add({ label, freshness: VersionFreshness.Stale, version: s.version }),
    };
  });
  const vrf = await ctx.vrf.proofs(jobs);
  const reader = await preloadedPaths(
    ctx,
    vrf.map((v) => v.nodeLabel),
    epoch,
  );
  const proofs: LookupProof[] = [];
  for (let i = 0; i < states.length; i++) {
    const s = states[i]!;
    const { existence: e, marker: m, freshness: f } = at[i]!;
    const [existence, marker, freshness] = [vrf[e]!, vrf[m]!, vrf[f]!];
    const existenceProof = await ctx.azks.membershipProof(reader, existence.nodeLabel, epoch);
    proofs.push({
      epoch: s.epoch,
      value: s.value,
      version: s.version,
      existenceVrfProof: existence.proof,
      existenceProof,
      markerVrfProof: marker.proof,
      markerProof:
        marker === existence
          ? existenceProof
          : await ctx.azks.membershipProof(reader, marker.nodeLabel, epoch),
      freshnessVrfProof: freshness.proof,
      freshnessProof: await ctx.azks.nonMembershipProof(reader, freshness.nodeLabel, epoch),
      commitmentNonce: nonceOf(commitmentNonces(ctx, s), existence, jobs[e]!),
    });
  }
  return proofs;
}
