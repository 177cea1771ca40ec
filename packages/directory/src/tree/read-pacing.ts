/**
 * Whether a preload should cut its frontier and read its halves at once, decided from its
 * own reads. Splitting pays when a read mostly waits (a round trip to a remote store: this
 * thread sits idle) and costs when it mostly works (rows decoded here, or a store sharing
 * these cores): then more reads at once only compete for the same CPUs and add round trips.
 * Each read's wait and work are told apart by the event loop's utilization over the read
 * (idle time against busy time), not by its duration alone.
 */

import { performance } from 'node:perf_hooks';

/** Reads observed before deciding (the first levels of a walk are one read each). */
const WARM_UP = 3;
/** Splitting pays once reads spend at least this share of their time idle. */
const IDLE_SHARE = 0.5;

export class ReadPacing {
  #idle = 0;
  #busy = 0;
  #reads = 0;

  /** Runs `read`, noting how much of it this thread spent idle. */
  async observe<T>(read: () => Promise<T>): Promise<T> {
    const before = performance.eventLoopUtilization();
    const result = await read();
    const during = performance.eventLoopUtilization(before);
    this.#idle += during.idle;
    this.#busy += during.active;
    this.#reads++;
    return result;
  }

  /** True once enough reads were seen and they mostly waited. */
  get split(): boolean {
    const total = this.#idle + this.#busy;
    return this.#reads >= WARM_UP && total > 0 && this.#idle / total >= IDLE_SHARE;
  }
}
