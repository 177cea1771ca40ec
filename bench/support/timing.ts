/**
 * A timing loop that runs the same way in Node and in a browser page (only `performance.now`):
 * warm up for a while, size a batch to the sample time from the warm-up rate, then time several
 * batches and report the median (and the best) time per call. Batches of tens of milliseconds
 * keep Chromium's coarse timer (100 us with jitter outside cross-origin isolation) negligible.
 */

export interface TimingOptions {
  warmupMs: number;
  sampleMs: number;
  samples: number;
}

/** Many short samples: on a shared machine the best of them is the least disturbed figure. */
export const DEFAULT_TIMING: TimingOptions = { warmupMs: 300, sampleMs: 100, samples: 15 };
export const QUICK_TIMING: TimingOptions = { warmupMs: 100, sampleMs: 50, samples: 5 };

export interface Timing {
  /** Median over the samples. */
  msPerOp: number;
  opsPerSec: number;
  /** Fastest sample: the least disturbed by other load on a shared machine. */
  minMsPerOp: number;
  samples: number;
  callsPerSample: number;
}

/** Results land here so that no engine can drop a call as dead code. */
let sink: unknown;
export const lastResult = (): unknown => sink;

export function time(fn: () => unknown, options: TimingOptions = DEFAULT_TIMING): Timing {
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    sink = fn();
    calls++;
    elapsed = performance.now() - start;
  } while (elapsed < options.warmupMs);
  const batch = Math.max(1, Math.round((options.sampleMs * calls) / elapsed));
  const perOp: number[] = [];
  for (let s = 0; s < options.samples; s++) {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) sink = fn();
    perOp.push((performance.now() - t0) / batch);
  }
  perOp.sort((a, b) => a - b);
  const median = perOp[perOp.length >> 1]!;
  return {
    msPerOp: median,
    opsPerSec: 1000 / median,
    minMsPerOp: perOp[0]!,
    samples: options.samples,
    callsPerSample: batch,
  };
}

/**
 * The median time of `runs` calls of `f`, ms, after one warm-up call: for operations long
 * enough (milliseconds and more) to time one call at a time, awaited in turn.
 */
export async function medianRunMs(runs: number, f: () => unknown): Promise<number> {
  await f(); // warm-up
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await f();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
