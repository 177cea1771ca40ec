/**
 * An epoch's VRF proofs computed while its publish evaluates its labels and builds and commits
 * its tree, on the VRF engine's idle threads (`VrfEngine.proveWhenIdle`: the lowest scheduling
 * priority). Most of a publish leaves a core unused (the leaves' commitments, the preload's
 * storage reads and the commit's writes run on the calling thread alone); the proofs, which
 * cost more CPU than the rest of the publish (epoch-proofs.ts), take what is left over there
 * instead of all of it after the commit. The scheduler gives a thread at the default priority
 * about 68 times the share of an idle one, yet the publish's phases before the commit were
 * measured 5-15% slower beside them: an update epoch, whose commit holds one core for
 * seconds, gains most (bench/RESULTS.md, "proofs on idle cores").
 *
 * What is computed here is only a head start: once the epoch committed, `proveEpoch` stores
 * the epoch's proofs as before and proves whatever this did not get to. A proof is a function
 * of its key, so one proved here is the very proof that would be proved there.
 */

import type { ValueStateRecord } from '@akd-ts/storage';
import { vrfProofMapKey } from '@akd-ts/storage';
import type { DirectoryContext } from '../context.js';
import type { VrfJob } from './engine.js';
import { sweepsFrom } from './marker-sweeps.js';
import { markerHorizon, publishProofJobs } from './stored-proofs.js';

/**
 * The fewest jobs worth starting the idle threads for (once, then they stay): below it the
 * proofs after the commit take a fraction of a second anyway.
 */
const MIN_JOBS = 4096;

/** Proofs computed ahead of `proveEpoch`, by `vrfProofMapKey`. */
export type EarlyProofMap = Map<string, Uint8Array>;

/**
 * Proving under way on the idle threads, until `stop`. It goes on past the commit while
 * `proveEpoch` plans what to store (an update epoch reads its existence proofs back for a
 * second or more on the calling thread alone), and stops before that proves the rest.
 */
export interface EarlyProofs {
  /**
   * The proofs made so far, growing until `stop` as this thread hears of them (each task's
   * proofs when its event loop next turns, where the engine reports them as they come; else
   * all of them at `stop`): a proof found here once stays. A SQLite commit or a plan that
   * reads synchronously hears of none until it ends; `stop` collects them all.
   */
  readonly made: EarlyProofMap;
  /**
   * Takes no further work; resolves, once the work in hand is done, with `made` complete (a
   * second call: the same).
   */
  stop(): Promise<EarlyProofMap>;
}

/**
 * Starts the engine's idle threads ahead of a publish of `updates` whose proofs will be worth
 * proving early (`startEarlyProofs`): they load while the publish reads its labels' versions.
 */
export function warmIdleThreads(ctx: DirectoryContext, updates: number): void {
  // at least two proofs per new version: its existence and freshness proofs
  if (2 * updates >= MIN_JOBS) void ctx.vrf.proveWhenIdle?.([]).stop();
}

/**
 * Starts proving what `proveEpoch` will store for the versions `states` of `epoch` (publish-
 * proofs.ts), or undefined where the engine has no idle threads or there are fewer than
 * `MIN_JOBS` jobs. Left out: the marker sweeps' share, which is walked after the commit. Proofs the
 * store may hold already (an update's existence proof, stored as a marker of the previous
 * version; markers a sweep may have added) are proved too, the existence proofs last: each
 * proved here is one `planPublishProofs` does not read back on the calling thread, which
 * costs more than proving on a core that would idle otherwise.
 */
export async function startEarlyProofs(
  ctx: DirectoryContext,
  states: Pick<ValueStateRecord, 'username' | 'version'>[],
  epoch: bigint,
): Promise<EarlyProofs | undefined> {
  const vrf = ctx.vrf;
  if (vrf.proveWhenIdle === undefined) return undefined;
  const horizon = markerHorizon(epoch, await sweepsFrom(ctx.storage.db));
  const jobs: VrfJob[] = [];
  // after the rest: first versions' existence proofs, which cost about half as much once the
  // commit is done (their evaluations keep points toward them: VrfJob.keep)
  const firsts: VrfJob[] = [];
  // last: existence proofs the store holds already, as markers (read back if not proved here)
  const held: VrfJob[] = [];
  for (const s of states) {
    const part = publishProofJobs(s.username, s.version, horizon);
    const [existence, ...rest] = part.jobs;
    (s.version === 1n ? firsts : held).push(existence!);
    jobs.push(...rest, ...part.unlessStored);
  }
  jobs.push(...firsts, ...held);
  if (jobs.length < MIN_JOBS) return undefined;
  const made: EarlyProofMap = new Map();
  // which jobs are in `made` already: each key is built once, as its proof comes
  const added = new Uint8Array(jobs.length);
  const add = (i: number, proof: Uint8Array | undefined) => {
    if (proof === undefined || added[i] === 1) return;
    added[i] = 1;
    made.set(vrfProofMapKey(jobs[i]!), proof);
  };
  const proving = vrf.proveWhenIdle(jobs, (start, proofs) =>
    proofs.forEach((proof, k) => add(start + k, proof)),
  );
  let stopped: Promise<EarlyProofMap> | undefined;
  return {
    made,
    stop() {
      stopped ??= proving.stop().then((proofs) => {
        proofs.forEach((proof, i) => add(i, proof));
        return made;
      });
      return stopped;
    },
  };
}
