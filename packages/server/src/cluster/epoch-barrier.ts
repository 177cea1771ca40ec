/**
 * The cluster's epoch barrier (launcher.ts): when the writer commits an epoch, every proof
 * server running then is told to serve it, and the writer's publish is answered only once
 * they all say they do, or once they are gone, or after a time limit (default 2 s): a client
 * told "published" is then not served the epoch before by any proof server.
 */

import type { ToChild } from './messages.js';

/** What the barrier needs of a child: a way to send it a message. */
export interface BarrierChild {
  send(message: ToChild): void;
}

/** Starts a timer and returns what cancels it (tests inject one that fires when told). */
export type Schedule = (fire: () => void, ms: number) => () => void;

const realTimer: Schedule = (fire, ms) => {
  const timer = setTimeout(fire, ms);
  return () => clearTimeout(timer);
};

interface Pending<C> {
  waiting: Set<C>;
  /** The writer's number for its publish, and the writer process waiting. */
  writerId: number;
  from: C;
  cancel: () => void;
}

/**
 * @example
 * ```ts
 * const barrier = new EpochBarrier<Child>(2_000);
 * barrier.announce(writer, message.id, message.epoch, proofServers);
 * barrier.seen(proofServer, id); // on its 'epoch-seen'
 * ```
 */
export class EpochBarrier<C extends BarrierChild> {
  readonly #pending = new Map<number, Pending<C>>();
  #nextId = 1;

  constructor(
    private readonly timeoutMs = 2_000,
    private readonly schedule: Schedule = realTimer,
  ) {}

  /** Epochs announced and not settled yet. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Tells each of `proofs` to serve `epoch`, which `from` published as its publish `writerId`;
   * `from` is told `epoch-acked` once they all serve it (at once when there are none).
   */
  announce(from: C, writerId: number, epoch: string, proofs: Iterable<C>): void {
    const id = this.#nextId++;
    const waiting = new Set(proofs);
    const cancel = this.schedule(() => this.#settle(id), this.timeoutMs);
    this.#pending.set(id, { waiting, writerId, from, cancel });
    for (const p of waiting) p.send({ type: 'epoch', id, epoch });
    if (waiting.size === 0) this.#settle(id);
  }

  /** `child` serves the epoch announced as `id`. */
  seen(child: C, id: number): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    pending.waiting.delete(child);
    if (pending.waiting.size === 0) this.#settle(id);
  }

  /** `child` exited: no epoch waits for it any longer. */
  gone(child: C): void {
    for (const [id, pending] of this.#pending) {
      pending.waiting.delete(child);
      if (pending.waiting.size === 0) this.#settle(id);
    }
  }

  /** Answers every publish waiting (the cluster stops). */
  settleAll(): void {
    for (const id of [...this.#pending.keys()]) this.#settle(id);
  }

  #settle(id: number): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    pending.cancel();
    this.#pending.delete(id);
    pending.from.send({ type: 'epoch-acked', id: pending.writerId });
  }
}
