/**
 * The parallelism configuration (spec 13.1): for insertion and for preloading, each disabled,
 * a fixed degree, or "the available cores, else N". For insertion a degree is a number of
 * worker threads that insert and hash subtrees of a shared node arena; for the preload, the
 * storage reads in flight at once. No result depends on it.
 */

import { availableParallelism } from 'node:os';

/** One parallelism setting: an enum with data, never a boolean. */
export type ParallelismOption =
  | { kind: 'disabled' }
  | { kind: 'static'; degree: number }
  | { kind: 'availableOr'; fallback: number };

export const Parallelism = {
  disabled: (): ParallelismOption => ({ kind: 'disabled' }),
  static: (degree: number): ParallelismOption => ({ kind: 'static', degree }),
  availableOr: (fallback: number): ParallelismOption => ({ kind: 'availableOr', fallback }),
} as const;

export interface ParallelismConfig {
  /** Worker threads inserting and hashing subtrees below the parallel levels. */
  insertion: ParallelismOption;
  /** Concurrent storage reads of the preload's frontier halves. */
  preload: ParallelismOption;
  /**
   * The least number of elements a tree worker task takes (default 2,048): smaller subtrees,
   * and whole insertions below it, stay on the calling thread, where a task would cost more
   * than it saves.
   */
  minTaskSize?: number;
}

/** Upstream's default: the available cores, or 32 when unknown. */
export const DEFAULT_PARALLELISM: ParallelismConfig = {
  insertion: Parallelism.availableOr(32),
  preload: Parallelism.availableOr(32),
};

/** No parallelism anywhere: the lookup and history paths always use this. */
export const NO_PARALLELISM: ParallelismConfig = {
  insertion: Parallelism.disabled(),
  preload: Parallelism.disabled(),
};

/** The degree an option asks for, or undefined when disabled. */
export function parallelDegree(option: ParallelismOption): number | undefined {
  switch (option.kind) {
    case 'disabled':
      return undefined;
    case 'static':
      return option.degree;
    case 'availableOr': {
      const cores = availableParallelism();
      return Number.isFinite(cores) && cores > 0 ? cores : option.fallback;
    }
  }
}

/**
 * Levels of the recursion that fork (spec 13.1 `get_parallel_levels`): `ceil(log2(p))`,
 * saturating at 0 for p <= 1; undefined when disabled.
 */
export function parallelLevels(option: ParallelismOption): number | undefined {
  const p = parallelDegree(option);
  if (p === undefined) return undefined;
  return p <= 1 ? 0 : Math.min(255, Math.ceil(Math.log2(p)));
}

/** The levels a child task gets (spec 13.1): `x <= 1 -> none, else x - 1`. */
export function childLevels(levels: number | undefined): number | undefined {
  return levels === undefined || levels <= 1 ? undefined : levels - 1;
}
