/**
 * Future markers stored ahead of need, a horizon at a time (spec 10.4). A publish at epoch E
 * stores the markers of its versions up to 2E (stored-proofs.ts `markerHorizon`). Every
 * marker past that is a power of two: a version v <= E has its fill markers below its next
 * power of two, which is at most 2v. So a label untouched since epoch e lacks only powers of
 * two M > 2e, and needs M once the epoch reaches M.
 *
 * A sweep adds M to every such label during epochs M/2 .. M - 1: each publish in that window
 * walks a share of the labels (in `Database.listUsernames` order) in proportion to the
 * window's elapsed part, and the publish of epoch M - 1 finishes the walk. So no epoch proves
 * M for all labels at once when it reaches M (the burst a power of two, or a skiplist entry
 * such as 65536, would cause). Labels published from epoch M/2 on get M at publish (2E >= M).
 *
 * The walk's position is a store setting, written after the epoch commits: a failed or
 * interrupted publish walks the same labels again, which only proves some twice (proofs are a
 * function of their key). A label this publish updates is skipped: its new version stores
 * every marker up to 2E, and if the publish fails, the position does not move past it.
 *
 * Sweeps run from the epoch recorded in `SWEEPS_FROM_SETTING`: 0 for a store created with
 * stored proofs, the epoch a backfill started at for an older one (every version published
 * before holds all its markers). A store that cannot list its labels has no sweeps, and its
 * publishes store every marker up to 2^32 instead (so do publishes after a writer that stored
 * no proofs, until a backfill).
 */

import { VersionFreshness, fromHex, toHex } from '@akd-ts/core';
import type { Database } from '@akd-ts/storage';
import type { VrfJob } from './engine.js';
import { MARKER_HORIZON, allFutureMarkers, proofKey } from './stored-proofs.js';
import { vrfProofMapKey } from '@akd-ts/storage';

/** The epoch F sweeps start from: versions published at or before F hold every marker. */
export const SWEEPS_FROM_SETTING = 'vrf_marker_sweeps_from';

/** The setting holding sweep M's position: `complete`, or `<done>:<hex of the last label>`. */
export function sweepSetting(m: bigint): string {
  return `vrf_marker_sweep_${m}`;
}

/** Labels read per storage call of a walk. */
const PAGE = 1_000;

/**
 * What a publish adds for the sweeps, walked as it is stored: `pages()` yields the missing
 * proofs a page of labels at a time, so that the writer never holds a sweep's share of the
 * labels (hundreds of thousands) at once. Once the pages are exhausted, `positions` holds
 * the setting values to record after the proofs are stored.
 */
export interface SweepWork {
  pages(): AsyncGenerator<VrfJob[]>;
  /** Setting name -> value, complete once `pages()` is exhausted. */
  positions: Map<string, string>;
}

/**
 * The epoch this store's sweeps run from, or undefined where its publishes store every marker.
 * @throws TypeError when the store sweeps but this Database cannot list its labels (a wrapper
 * that lost `listUsernames`): publishing on would leave untouched labels without markers
 */
export async function sweepsFrom(db: Database): Promise<bigint | undefined> {
  const from = await db.getSetting(SWEEPS_FROM_SETTING);
  if (from === undefined || from === '') return undefined;
  if (db.listUsernames === undefined) {
    throw new TypeError(
      "this store's publishes sweep VRF markers ahead of need, which needs Database.listUsernames",
    );
  }
  return BigInt(from);
}

/** The sweeps that must advance at `epoch`: powers of two M with M/2 <= epoch, M > 2F + 2. */
export function sweepsAt(epoch: bigint, from: bigint): bigint[] {
  const out: bigint[] = [];
  for (let m = 4n; m <= MARKER_HORIZON && m / 2n <= epoch; m *= 2n) {
    if (m > 2n * from + 2n) out.push(m);
  }
  return out;
}

/** How many labels sweep M has walked by the publish of `epoch`, of about `labels` in all. */
export function sweepTarget(m: bigint, epoch: bigint, labels: bigint): bigint {
  if (epoch >= m - 1n) return -1n; // the last epoch before M: the whole walk
  const half = m / 2n;
  const elapsed = epoch - half + 1n;
  return (labels * elapsed + half - 1n) / half; // rounded up
}

/** The proofs (Fresh, m) that the latest versions before `epoch` of `labels` lack. */
async function missingMarkers(
  db: Database,
  labels: Uint8Array[],
  m: bigint,
  epoch: bigint,
): Promise<VrfJob[]> {
  if (labels.length === 0) return [];
  const versions = await db.getUserStateVersions(labels, { kind: 'leqEpoch', epoch: epoch - 1n });
  const wanted: VrfJob[] = [];
  for (const v of versions) {
    if (v.version < m && allFutureMarkers(v.version).includes(m)) {
      wanted.push({ label: v.username, freshness: VersionFreshness.Fresh, version: m });
    }
  }
  if (wanted.length === 0) return [];
  const have = new Set((await db.getVrfProofs(wanted.map(proofKey))).map(vrfProofMapKey));
  return wanted.filter((job) => !have.has(vrfProofMapKey(job)));
}

/**
 * The marker proofs the sweeps add to the publish of `epoch`, skipping the labels it updates
 * (hex) and proofs the store already holds: sweep after sweep, ascending, each sweep's proofs
 * in label order (the order an epoch's proofs are stored in, epoch-proofs.ts).
 * @param labels an estimate of the number of labels, at least the true one (the tree's
 * node count halved: every label has a leaf) so that the walks end early, not late
 */
export function sweepWork(
  db: Database,
  from: bigint,
  epoch: bigint,
  labels: bigint,
  updated: Set<string>,
): SweepWork {
  const positions = new Map<string, string>();
  const list = db.listUsernames!.bind(db);
  async function* pages(): AsyncGenerator<VrfJob[]> {
    for (const m of sweepsAt(epoch, from)) {
      const name = sweepSetting(m);
      const stored = await db.getSetting(name);
      if (stored === 'complete') continue;
      const colon = stored === undefined ? -1 : stored.indexOf(':');
      let done = colon < 0 ? 0n : BigInt(stored!.slice(0, colon));
      let after =
        colon < 0 || colon === stored!.length - 1 ? undefined : fromHex(stored!.slice(colon + 1));
      const target = sweepTarget(m, epoch, labels);
      let complete = false;
      while (target < 0n || done < target) {
        const want =
          target < 0n ? PAGE : Number(target - done < BigInt(PAGE) ? target - done : BigInt(PAGE));
        const page = await list(after, want);
        if (page.length === 0) {
          complete = true;
          break;
        }
        const candidates = page.filter((label) => !updated.has(toHex(label)));
        const jobs = await missingMarkers(db, candidates, m, epoch);
        if (jobs.length > 0) yield jobs;
        done += BigInt(page.length);
        after = page[page.length - 1]!;
        if (page.length < want) {
          complete = true;
          break;
        }
      }
      positions.set(
        name,
        complete ? 'complete' : `${done}:${after === undefined ? '' : toHex(after)}`,
      );
    }
  }
  return { pages, positions };
}
