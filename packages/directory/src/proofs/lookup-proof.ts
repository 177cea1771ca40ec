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
  toHex,
  type AkdLabel,
  type LookupProof,
} from '@akd-ts/core';
import type { UserStateAndVrfProofs, ValueStateFlag, ValueStateRecord } from '@akd-ts/storage';
import { commitmentNonces, preloadedPaths, type DirectoryContext } from '../context.js';
import type { VrfJob, VrfLabelProof } from '../vrf/engine.js';
import { StoredVrfProofs, nonceOf, proofKey, storedProofs } from '../vrf/stored-proofs.js';

const Fresh = VersionFreshness.Fresh;
const leq = (epoch: bigint): ValueStateFlag => ({ kind: 'leqEpoch', epoch });

/** `DIRECTORY_LABEL_NOT_FOUND` for a label with no value at `epoch` (lookups and histories). */
export function labelNotFound(label: AkdLabel, epoch: bigint): AkdError {
  return new AkdError(
    'DIRECTORY_LABEL_NOT_FOUND',
    `label ${describeLabel(label)} has no value at epoch ${epoch}`,
  );
}

/**
 * The VRF jobs of a lookup of `label` proving `state`: the existence job (its label known
 * from the state), the marker's unless the marker is the version itself (a power of two,
 * version 1 among them), then the freshness job.
 */
function lookupJobs(label: AkdLabel, state: ValueStateRecord): VrfJob[] {
  const { version } = state;
  const jobs: VrfJob[] = [{ label, freshness: Fresh, version, nodeLabel: state.label }];
  const marker = markerVersion(version);
  if (marker !== version) jobs.push({ label, freshness: Fresh, version: marker });
  jobs.push({ label, freshness: VersionFreshness.Stale, version });
  return jobs;
}

/** The states a lookup of `labels` proves, with their jobs and the jobs' proofs. */
interface LookupInputs {
  states: ValueStateRecord[];
  jobs: VrfJob[][];
  vrf: VrfLabelProof[][];
}

/**
 * A keyless lookup's state and stored proofs of one label, in one read
 * (`StorageManager.getUserStateAndVrfProofs`: one statement where the store has it).
 */
async function storedInputs(
  ctx: DirectoryContext,
  label: AkdLabel,
  epoch: bigint,
): Promise<LookupInputs> {
  let jobs: VrfJob[] = [];
  const keys = (s: ValueStateRecord) => (jobs = lookupJobs(label, s)).map(proofKey);
  let answer: UserStateAndVrfProofs;
  try {
    answer = await ctx.storage.getUserStateAndVrfProofs(label, leq(epoch), keys);
  } catch (e) {
    if (!isAkdError(e, 'STORAGE_NOT_FOUND')) throw e;
    throw labelNotFound(label, epoch);
  }
  return { states: [answer.state], jobs: [jobs], vrf: [storedProofs(jobs, answer.proofs)] };
}

/**
 * The states and VRF proofs of a lookup: a single label without the key from one read
 * (`storedInputs`), otherwise the states in one batched read, then every job in one call.
 * @throws AkdError `DIRECTORY_LABEL_NOT_FOUND` naming the first label without a state
 */
async function lookupInputs(
  ctx: DirectoryContext,
  labels: AkdLabel[],
  epoch: bigint,
): Promise<LookupInputs> {
  const [only] = labels;
  if (labels.length === 1 && only !== undefined && ctx.vrf instanceof StoredVrfProofs) {
    return storedInputs(ctx, only, epoch);
  }
  const found = new Map<string, ValueStateRecord>();
  for (const s of await ctx.storage.getUserStates(labels, leq(epoch))) {
    found.set(toHex(s.username), s);
  }
  const states = labels.map((l) => {
    const state = found.get(toHex(l));
    if (state === undefined) throw labelNotFound(l, epoch);
    return state;
  });
  const jobs = states.map((s, i) => lookupJobs(labels[i]!, s));
  const flat = await ctx.vrf.proofs(jobs.flat());
  let at = 0;
  const vrf = jobs.map((j) => flat.slice(at, (at += j.length)));
  return { states, jobs, vrf };
}

/** Lookup proofs of `labels` against the tree at `epoch`, in input order. */
export async function buildLookupProofs(
  ctx: DirectoryContext,
  labels: AkdLabel[],
  epoch: bigint,
): Promise<LookupProof[]> {
  const { states, jobs, vrf } = await lookupInputs(ctx, labels, epoch);
  const reader = await preloadedPaths(
    ctx,
    vrf.flat().map((v) => v.nodeLabel),
    epoch,
  );
  const proofs: LookupProof[] = [];
  for (let i = 0; i < states.length; i++) {
    const s = states[i]!;
    // in lookupJobs' order: existence, the marker where it is not the version, freshness
    const own = vrf[i]!;
    const existence = own[0]!;
    const marker = own.length === 3 ? own[1]! : existence;
    const freshness = own[own.length - 1]!;
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
      commitmentNonce: nonceOf(commitmentNonces(ctx, s), existence, jobs[i]![0]!),
    });
  }
  return proofs;
}
