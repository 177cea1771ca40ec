/**
 * VRF proofs kept in the store, so that the processes serving proofs never hold the VRF
 * secret. The writer stores, as it publishes version v of a label, every VRF proof a lookup
 * or a history can later need of it (spec 10.3, 10.4): the existence proof (Fresh, v) with
 * the version's commitment nonce, the freshness proof (Stale, v), and the future markers of
 * v (Fresh, m) that version v - 1 did not already need. A reader then answers its VRF jobs
 * with one batched read (`StoredVrfProofs`), in place of the engine that holds the key.
 *
 * Future markers depend on the epoch, but only as a cut-off: for a version v below 2^32,
 * `get_marker_versions(v, v, epoch).future` is the finite list `allFutureMarkers(v)` (fill
 * versions below the next power of two, powers of two up to the next skiplist entry, then
 * the skiplist entries up to 2^32), ascending, cut at `epoch`. A publish at epoch E stores the
 * list up to 2E; sweeps add the powers of two past it ahead of need, spread over the epochs
 * before each is reached (marker-sweeps.ts). A store that cannot list its labels stores the
 * whole list at publish instead.
 */

import { AkdError, VersionFreshness, getMarkerVersions, toHex, type NodeLabel } from '@akd-ts/core';
import type { Database, VrfProofKey, VrfProofRecord } from '@akd-ts/storage';
import { vrfProofMapKey } from '@akd-ts/storage';
import { labelProof, type VrfEngine, type VrfJob, type VrfLabelProof } from './engine.js';

/** The last skiplist entry (spec 10.4): markers of versions below it never pass it. */
export const MARKER_HORIZON = 1n << 32n;

/** The name of the store setting that says every published version has its proofs. */
export const VRF_PROOFS_SETTING = 'vrf_proofs';
/** Its value once every published version has them (a store created with them, or backfilled). */
export const VRF_PROOFS_COMPLETE = 'complete';

/**
 * Every future marker of a label whose latest version is `version`, for any epoch, ascending
 * (spec 10.4): `getMarkerVersions(version, version, epoch).future` is its prefix up to epoch.
 * @throws RangeError for a version outside 1 .. 2^32 - 1
 */
export function allFutureMarkers(version: bigint): bigint[] {
  if (version < 1n || version >= MARKER_HORIZON) {
    throw new RangeError(`version must be 1 to 2^32 - 1, not ${version}`);
  }
  return getMarkerVersions(version, version, MARKER_HORIZON).future;
}

/**
 * The markers a publish at `epoch` stores with its versions: up to twice the epoch where
 * sweeps add the rest ahead of need (marker-sweeps.ts, `from` their start), else all of them.
 */
export function markerHorizon(epoch: bigint, from: bigint | undefined): bigint {
  if (from === undefined) return MARKER_HORIZON;
  const twice = 2n * epoch;
  return twice < MARKER_HORIZON ? twice : MARKER_HORIZON;
}

/** The proofs a publish of one version stores (`publishProofJobs`). */
export interface VersionProofJobs {
  /** Needed: the existence proof (Fresh, version) first, whose record carries the nonce. */
  jobs: VrfJob[];
  /** Needed unless the store holds them already (markers the previous version may have). */
  unlessStored: VrfJob[];
}

/**
 * The proofs the publish of `version` of `label` stores, with markers up to `horizon`: the
 * existence and freshness proofs, and each future marker of the version up to the horizon
 * that the previous version's publish did not surely store. That publish, at an epoch of at
 * least `version - 1`, stored the previous version's markers up to `markerHorizon` of that
 * epoch, so surely up to 2 (version - 1), or all of them without a horizon; a marker they
 * share past that is asked for only if the store lacks it (a sweep may have added it).
 */
export function publishProofJobs(
  label: Uint8Array,
  version: bigint,
  horizon: bigint = MARKER_HORIZON,
): VersionProofJobs {
  const fresh = (v: bigint): VrfJob => ({ label, freshness: VersionFreshness.Fresh, version: v });
  const { needed, unlessStored } = markersToStore(version, horizon);
  return {
    jobs: [
      fresh(version),
      { label, freshness: VersionFreshness.Stale, version },
      ...needed.map(fresh),
    ],
    unlessStored: unlessStored.map(fresh),
  };
}

/** The markers `publishProofJobs` asks for, by version and horizon. */
interface MarkersToStore {
  needed: readonly bigint[];
  unlessStored: readonly bigint[];
}

/**
 * `markersToStore` of recent (version, horizon) pairs: an epoch's versions share a few values
 * (most are 1 or 2), and computing the markers again costs more than the rest of a job list.
 */
const markerPlans = new Map<string, MarkersToStore>();
/** The most pairs remembered; past it the map starts again. */
const MARKER_PLANS = 4096;

/** The markers of `version` up to `horizon` that `publishProofJobs` stores (see there). */
function markersToStore(version: bigint, horizon: bigint): MarkersToStore {
  const key = `${version}:${horizon}`;
  const known = markerPlans.get(key);
  if (known !== undefined) return known;
  const needed: bigint[] = [];
  const unlessStored: bigint[] = [];
  const before = new Set(version > 1n ? allFutureMarkers(version - 1n) : []);
  const sure = horizon === MARKER_HORIZON ? MARKER_HORIZON : 2n * (version - 1n);
  for (const m of allFutureMarkers(version)) {
    if (m > horizon) continue;
    if (!before.has(m)) needed.push(m);
    else if (m > sure) unlessStored.push(m);
  }
  if (markerPlans.size >= MARKER_PLANS) markerPlans.clear();
  const plan = { needed, unlessStored };
  markerPlans.set(key, plan);
  return plan;
}

/** The storage key of a job's proof. */
export function proofKey(job: VrfJob): VrfProofKey {
  return { label: job.label, freshness: job.freshness, version: job.version };
}

/** The error a proof gets when the store lacks one of its VRF proofs (never a wrong proof). */
export function proofMissing(job: VrfJob, what = 'VRF proof'): AkdError {
  const kind = job.freshness === VersionFreshness.Fresh ? 'fresh' : 'stale';
  return new AkdError(
    'VRF_PROOF_MISSING',
    `the store has no ${what} of label ${toHex(job.label)} (${kind}, version ${job.version}); ` +
      'a store written before VRF proofs were stored needs `akd vrf backfill` once',
  );
}

/**
 * The proofs of `jobs` among `records` (a read of their keys), in job order.
 * @throws AkdError `VRF_PROOF_MISSING` naming the first job with none
 */
export function storedProofs(jobs: VrfJob[], records: VrfProofRecord[]): VrfLabelProof[] {
  const found = new Map<string, VrfProofRecord>();
  for (const r of records) found.set(vrfProofMapKey(r), r);
  return jobs.map((job) => {
    const r = found.get(vrfProofMapKey(job));
    if (r === undefined) throw proofMissing(job);
    return labelProof(r.proof, r.nonce, job.nodeLabel);
  });
}

/**
 * The VRF "engine" of a directory opened without the key: proofs come from the store, one
 * batched read per call; node labels (publishing) are refused.
 */
export class StoredVrfProofs implements VrfEngine {
  readonly name = 'stored VRF proofs (no key)';

  constructor(private readonly db: Database) {}

  nodeLabels(): Promise<NodeLabel[]> {
    return Promise.reject(
      new AkdError(
        'VRF_INVALID_SECRET_KEY',
        "publishing needs the directory's VRF secret key; this directory serves stored proofs",
      ),
    );
  }

  /** @throws AkdError `VRF_PROOF_MISSING` naming the first job the store has no proof of */
  async proofs(jobs: VrfJob[]): Promise<VrfLabelProof[]> {
    return storedProofs(jobs, await this.db.getVrfProofs(jobs.map(proofKey)));
  }

  async close(): Promise<void> {}
}

/**
 * The commitment nonce of a state whose existence proof is `existence` (spec 6): computed
 * with the commitment key where the directory holds it, else the nonce stored with the proof.
 * @throws AkdError `VRF_PROOF_MISSING` when neither is there
 */
export function nonceOf(
  compute: ((nodeLabel: NodeLabel) => Uint8Array) | undefined,
  existence: VrfLabelProof,
  job: VrfJob,
): Uint8Array {
  if (compute !== undefined) return compute(existence.nodeLabel);
  if (existence.nonce === undefined) throw proofMissing(job, 'commitment nonce');
  return existence.nonce;
}
