/**
 * Running a publish for the API: the directory's publish with its phases timed, and the
 * answer (`PublishJson`). Shared by the writer process and by an app that publishes in its own
 * thread (tests, embedding).
 */

import type { FastifyBaseLogger } from 'fastify';
import { toHex } from '@akd-ts/core';
import type { Directory, PublishProgress, Update } from '@akd-ts/directory';

/** `POST /v1/publish` */
export interface PublishJson {
  epoch: string;
  rootHash: string;
  /** False when every value was already published, so no epoch was created. */
  newEpoch: boolean;
  updates: number;
  seconds: number;
  /**
   * Seconds per phase: versions, vrf, preload, tree, commit (the phases the publish reached),
   * and proofs (storing the epoch's VRF proofs, which follows the commit).
   */
  phases: Partial<Record<PublishProgress['phase'] | 'proofs', number>>;
}

/**
 * Publishes `updates`, logging counts and timings (never labels or values).
 *
 * @example const json = await runPublish(directory, updates, app.log);
 */
export async function runPublish(
  directory: Directory,
  updates: Update[],
  log: FastifyBaseLogger,
): Promise<PublishJson> {
  const started = performance.now();
  const phases: PublishJson['phases'] = {};
  let phase: PublishProgress['phase'] | undefined;
  let since = started;
  // only a publish that changes something reaches the tree phase and creates an epoch
  let newEpoch = false;
  const onProgress = (p: PublishProgress) => {
    if (p.phase === 'tree') newEpoch = true;
    if (p.phase === phase) return;
    const now = performance.now();
    if (phase !== undefined) phases[phase] = Number(((now - since) / 1000).toFixed(3));
    phase = p.phase;
    since = now;
  };
  const epochHash = await directory.publish(updates, { onProgress });
  if (newEpoch) {
    // answered once servers without the key can serve the epoch: its VRF proofs are stored
    const proving = performance.now();
    await directory.vrfProofsStored();
    phases.proofs = Number(((performance.now() - proving) / 1000).toFixed(3));
  }
  const seconds = (performance.now() - started) / 1000;
  log.info(
    { updates: updates.length, epoch: epochHash.epoch.toString(), newEpoch, seconds, phases },
    'published',
  );
  return {
    epoch: epochHash.epoch.toString(),
    rootHash: toHex(epochHash.hash),
    newEpoch,
    updates: updates.length,
    seconds: Number(seconds.toFixed(3)),
    phases,
  };
}
