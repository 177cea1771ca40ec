/**
 * The primary's side of spreading connections (launcher.ts, connection-spread.ts): which
 * proof servers listen, the copy of the listening socket it keeps (never accepting from it)
 * to hand to those that start accepting again, and the accept orders it sends them. Limits
 * are sent only when spreading is on, once the socket is kept and every proof server listens.
 */

import { ConnectionSpread, type AcceptOrder } from './connection-spread.js';
import type { ToChild } from './messages.js';

/** What the keeper needs of a proof server. */
export interface SpreadChild {
  send(message: ToChild, handle?: unknown): void;
}

/** A listening socket's copy, as the primary holds it. */
interface Closable {
  close(): void;
}

/**
 * @example
 * ```ts
 * const keeper = new SpreadKeeper<Child>(options.spreadConnections === true, workers);
 * keeper.listening(child); // its 'listening'
 * keeper.keepSocket(handle); // its 'socket'
 * ```
 */
export class SpreadKeeper<C extends SpreadChild> {
  readonly #spread = new ConnectionSpread<C>();
  readonly #listening = new Set<C>();
  #socket: Closable | undefined;

  /**
   * @param enabled whether proof servers get limits (`--connection-spread`)
   * @param workers the proof servers the cluster runs: limits start once all listen
   */
  constructor(
    private readonly enabled: boolean,
    private readonly workers: number,
  ) {}

  /** Proof servers listening now. */
  get listeningCount(): number {
    return this.#listening.size;
  }

  /** The copy of the listening socket kept here, once a proof server has sent one. */
  get socket(): unknown {
    return this.#socket;
  }

  /** `child` listens. */
  listening(child: C): void {
    this.#listening.add(child);
    this.#order(this.#spread.add(child));
    this.#enableWhenReady();
  }

  /**
   * A proof server sent a copy of the listening socket: the first is kept; later ones (proof
   * servers that bound the port at the same time, through the cluster) are closed.
   */
  keepSocket(handle: unknown): void {
    if (this.#socket === undefined && handle !== undefined) {
      this.#socket = handle as Closable;
      this.#enableWhenReady();
    } else (handle as Partial<Closable> | undefined)?.close?.();
  }

  /** `child` holds `count` connections. */
  report(child: C, count: number): void {
    this.#order(this.#spread.report(child, count));
  }

  /** `child` accepts (or stopped), holding `count` connections. */
  confirm(child: C, on: boolean, count: number): void {
    this.#order(this.#spread.confirm(child, on, count));
  }

  /** `child` exited; `reorder`: the others' limits change (not while the cluster stops). */
  gone(child: C, reorder: boolean): void {
    this.#listening.delete(child);
    if (reorder) this.#order(this.#spread.remove(child));
  }

  /** Closes the socket kept (the cluster stopped). */
  close(): void {
    this.#socket?.close();
  }

  #enableWhenReady(): void {
    if (!this.enabled) return;
    if (this.#socket !== undefined && this.#listening.size >= this.workers) {
      this.#order(this.#spread.enable());
    }
  }

  #order(orders: AcceptOrder<C>[]): void {
    for (const o of orders) {
      o.worker.send(
        { type: 'accept', start: o.start, limit: o.limit },
        o.start ? this.#socket : undefined,
      );
    }
  }
}
