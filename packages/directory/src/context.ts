/**
 * What every directory operation shares: the configuration, the storage manager, the tree, the
 * VRF engine and the commitment key, plus the tuning knobs.
 */

import type { Configuration, NodeLabel } from '@akd-ts/core';
import type { StorageManager, ValueStateRecord } from '@akd-ts/storage';
import type { Azks } from './azks.js';
import type { ParallelismConfig } from './parallelism.js';
import { VisitedReader, type VisitedNodes } from './tree/visited-reader.js';
import type { VrfEngine } from './vrf/engine.js';

export interface DirectoryContext {
  config: Configuration;
  storage: StorageManager;
  azks: Azks;
  vrf: VrfEngine;
  /**
   * `H(vrf secret)` (spec 3.4). Secret: never logged. Empty in a directory opened without
   * the key, which serves the nonces stored with the proofs instead.
   */
  commitmentKey: Uint8Array;
  /** Whether publishes store the VRF proofs their versions need (stored-proofs.ts). */
  storeVrfProofs: boolean;
  publicKey: Uint8Array;
  parallelism: ParallelismConfig;
  /** Largest number of keys in one storage read during a preload. */
  maxPreloadBatch: number;
}

/**
 * Preloads the paths at `epoch` toward `targets` (a lookup's or a history's node labels) and
 * returns the reader their proofs' walks go through: the nodes the preload saw first, then
 * the storage manager (`VisitedReader`). The preload never forks, whatever the directory's
 * parallelism, so that one lookup cannot starve other requests.
 */
export async function preloadedPaths(
  ctx: DirectoryContext,
  targets: NodeLabel[],
  epoch: bigint,
): Promise<VisitedReader> {
  const visited: VisitedNodes = new Map();
  await ctx.azks.preloadFor(ctx.storage, targets, epoch, {
    levels: undefined,
    maxBatchSize: ctx.maxPreloadBatch,
    visited,
  });
  return new VisitedReader(ctx.storage, visited);
}

/**
 * How a proof gets the commitment nonce of `state` (spec 6) from its existence node label:
 * computed with the commitment key, or undefined when the directory has none (the stored
 * nonce is served).
 */
export function commitmentNonces(
  ctx: DirectoryContext,
  state: ValueStateRecord,
): ((nodeLabel: NodeLabel) => Uint8Array) | undefined {
  if (ctx.commitmentKey.length === 0) return undefined;
  return (nodeLabel) =>
    ctx.config.getCommitmentNonce(ctx.commitmentKey, nodeLabel, state.version, state.value);
}
