/**
 * Reads of concurrent callers joined into one statement. A proof server with a few lookups in
 * flight sends each lookup's reads as statements of their own, and on the driver's side a
 * statement costs about as much as the rows of a lookup's walk (its messages, the socket's
 * write and the result's setup: measured in bench/RESULTS.md). Calls made while the event
 * loop runs other callbacks are held until that turn ends, then sent together: a lone call
 * waits one turn, a call among others shares their statement.
 */

/** What a joined read is given: the calls of one group, in the order they came. */
export type JoinedRead<A, R> = (calls: readonly A[]) => Promise<R[]>;

interface Batch<A, R> {
  calls: A[];
  weight: number;
  settle: { resolve: (r: R) => void; reject: (e: unknown) => void }[];
}

export class Coalescer<A, R> {
  readonly #open = new Map<string, Batch<A, R>>();

  /**
   * @param read answers a batch's calls, aligned with them; its failure fails every call
   * @param weight what a call adds to its batch (targets, keys)
   * @param maxWeight a batch's most weight: a call that would take it past starts another
   * (a call heavier than it goes alone)
   */
  constructor(
    private readonly read: JoinedRead<A, R>,
    private readonly weight: (call: A) => number,
    private readonly maxWeight: number,
  ) {}

  /** Answers `call` with the calls of `group` made in the same turn of the event loop. */
  call(group: string, call: A): Promise<R> {
    const w = this.weight(call);
    let batch = this.#open.get(group);
    if (batch !== undefined && batch.weight + w > this.maxWeight) {
      this.#open.delete(group);
      batch = undefined;
    }
    if (batch === undefined) {
      const fresh: Batch<A, R> = { calls: [], weight: 0, settle: [] };
      this.#open.set(group, fresh);
      setImmediate(() => void this.#send(group, fresh));
      batch = fresh;
    }
    batch.calls.push(call);
    batch.weight += w;
    return new Promise<R>((resolve, reject) => batch.settle.push({ resolve, reject }));
  }

  async #send(group: string, batch: Batch<A, R>): Promise<void> {
    if (this.#open.get(group) === batch) this.#open.delete(group);
    try {
      const answers = await this.read(batch.calls);
      batch.settle.forEach((s, i) => s.resolve(answers[i]!));
    } catch (e) {
      batch.settle.forEach((s) => s.reject(e));
    }
  }
}
