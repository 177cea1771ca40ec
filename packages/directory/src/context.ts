/**
 * What every directory operation shares: the configuration, the storage manager, the tree, the
 * VRF engine and the commitment key, plus the tuning knobs.
 */

import type { Configuration } from '@akd-ts/core';
import type { StorageManager } from '@akd-ts/storage';
import type { Azks } from './azks.js';
import type { ParallelismConfig } from './parallelism.js';
import type { PreloadOptions } from './tree/preload.js';
import type { VrfEngine } from './vrf/engine.js';

export interface DirectoryContext {
  config: Configuration;
  storage: StorageManager;
  azks: Azks;
  vrf: VrfEngine;
  /** `H(vrf secret)` (spec 3.4). Secret: never logged. */
  commitmentKey: Uint8Array;
  publicKey: Uint8Array;
  parallelism: ParallelismConfig;
  /** Largest number of keys in one storage read during a preload. */
  maxPreloadBatch: number;
}

/** Preload options that never fork: lookups and histories use these whatever the config. */
export function serialPreload(ctx: DirectoryContext): PreloadOptions {
  return { levels: undefined, maxBatchSize: ctx.maxPreloadBatch };
}
