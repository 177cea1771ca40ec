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
 *
 * Heavy requests (histories, audits, blobs, batch lookups) wait in a queue of their own:
 * while lookups wait too, at most one heavy request starts for every `lightPerHeavy` lookups,
 * so a client asking for histories as fast as it can takes a bounded share of the process's
 * time instead of a share in proportion to its rate. Either kind alone gets every turn.
 */
export class TurnTaker {
  readonly #light: (() => void)[] = [];
  readonly #heavy: (() => void)[] = [];
  /** Light starts since the last heavy one. */
  #sinceHeavy = 0;
  #scheduled = false;

  /** @param lightPerHeavy light starts per heavy start while both wait (default 4) */
  constructor(readonly lightPerHeavy = 4) {
    if (!Number.isInteger(lightPerHeavy) || lightPerHeavy < 1) {
      throw new RangeError(`lightPerHeavy: a positive integer, not ${lightPerHeavy}`);
    }
  }

  /** Requests waiting for their turn now. */
  get waiting(): number {
    return this.#light.length + this.#heavy.length;
  }

  /**
   * Resolves on the caller's turn: one caller per event-loop turn, first come first served
   * within each kind.
   */
  take(heavy = false): Promise<void> {
    return new Promise((resolve) => {
      (heavy ? this.#heavy : this.#light).push(resolve);
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
    const heavyTurn =
      this.#heavy.length > 0 &&
      (this.#light.length === 0 || this.#sinceHeavy >= this.lightPerHeavy);
    const grant = heavyTurn ? this.#heavy.shift() : this.#light.shift();
    this.#sinceHeavy = heavyTurn ? 0 : this.#sinceHeavy + 1;
    // scheduled before the grant runs, so the next start is in the next turn of the loop
    // (immediates queued while immediates run wait for the next check phase)
    if (this.waiting > 0) this.#schedule();
    grant?.();
  };
}
