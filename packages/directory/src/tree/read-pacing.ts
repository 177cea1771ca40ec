/**
 * Whether a preload should cut its frontier and read its halves at once, decided from its
 * own reads. Splitting pays when a read mostly waits (a round trip to a remote store: this
 * thread sits idle) and costs when it mostly works (rows decoded here, or a store sharing
 * these cores): then more reads at once only compete for the same CPUs and add round trips.
 * Each read's wait and work are told apart by the event loop's utilization over the read
 * (idle time against busy time), not by its duration alone, and each read has one vote: a
 * read that a collection pause or a compilation kept busy for tens of milliseconds must not
 * outweigh the round trips of all the others (summed times let one such read decide a whole
 * walk).
 */

import { performance } from 'node:perf_hooks';

/** Reads observed before deciding (the first levels of a walk are one read each). */
const WARM_UP = 3;
/** Splitting pays once reads spend at least this share of their time idle. */
const IDLE_SHARE = 0.5;

/** This thread's idle and busy time so far, ms (what `performance.eventLoopUtilization` counts). */
export type LoopClock = () => { idle: number; active: number };

export class ReadPacing {
  /** Reads seen, and those that spent at least IDLE_SHARE of their time idle. */
  #reads = 0;
  #waited = 0;
  /** The caller's own work done while reads were out (see `exclude`), ms in all. */
  #excluded = 0;
  readonly #clock: LoopClock;

  /** @param clock this thread's idle and busy time (default: the event loop's; tests inject one) */
  constructor(clock: LoopClock = () => performance.eventLoopUtilization()) {
    this.#clock = clock;
  }

  /** Runs `read`, noting whether this thread spent most of it idle. */
  async observe<T>(read: () => Promise<T>): Promise<T> {
    const before = this.#clock();
    const excluded = this.#excluded;
    const result = await read();
    const after = this.#clock();
    const idle = after.idle - before.idle;
    const active = after.active - before.active;
    // the caller's own work is neither the reads' wait nor their work
    const own = Math.min(active, this.#excluded - excluded);
    const total = idle + active - own;
    if (total > 0 && idle / total >= IDLE_SHARE) this.#waited++;
    this.#reads++;
    return result;
  }

  /**
   * Notes `ms` of the caller's own work done on this thread while reads were observed (a walk
   * expanding the nodes of a read that answered before the next one): busy time that is not
   * the reads' work, which their votes leave out.
   */
  exclude(ms: number): void {
    this.#excluded += ms;
  }

  /** True once enough reads were seen and most of them waited. */
  get split(): boolean {
    return this.#reads >= WARM_UP && 2 * this.#waited > this.#reads;
  }
}
