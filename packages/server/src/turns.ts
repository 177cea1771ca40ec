/**
 * Turn-taking for proof work on one event loop. A proof request's work (VRF proving, tree
 * reads from a synchronous store, encoding) runs without yielding once it starts, and Node
 * runs every request that arrived in one poll phase back to back: fifty waiting lookups
 * would keep the loop from reading anything else, health probes included, for tens of
 * milliseconds at a time. Each request here waits for its own turn of the event loop
 * (`setImmediate`), one start per turn, so between two proofs the loop goes back to its
 * sockets and a health probe is answered after at most one proof's work, not after a whole
 * queue of them. Requests that await real I/O (PostgreSQL) still overlap: only their
 * starts are spaced out.
 */
export class TurnTaker {
  readonly #waiting: (() => void)[] = [];
  #scheduled = false;

  /** Requests waiting for their turn now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Resolves on the caller's turn: one caller per event-loop turn, first come first served. */
  take(): Promise<void> {
    return new Promise((resolve) => {
      this.#waiting.push(resolve);
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#next);
  }

  readonly #next = (): void => {
    this.#scheduled = false;
    const grant = this.#waiting.shift();
    // scheduled before the grant runs, so the next start is in the next turn of the loop
    // (immediates queued while immediates run wait for the next check phase)
    if (this.#waiting.length > 0) this.#schedule();
    grant?.();
  };
}
