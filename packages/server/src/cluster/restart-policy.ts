/**
 * When the primary of `akd serve` starts an exited process again, and when it gives up.
 *
 * - A proof server is always started again: giving up would stop every lookup, which is what
 *   an abuser who can make proof servers exit (memory exhaustion) would want. The delay doubles
 *   with each exit per proof server within the window, from `firstDelayMs` to
 *   `maxProofDelayMs`, so one that cannot start costs a process start every few seconds, not
 *   a busy loop, and one killed now and then is back within a second.
 * - The writer is started again likewise (up to `maxWriterDelayMs`), but after more than
 *   `maxWriterRestarts` exits within the window the cluster stops: publishing is then broken
 *   in a way that restarting does not mend, and an operator must look.
 *
 * Exits older than the window are forgotten. The clock is injectable for tests.
 */

import type { Role } from './messages.js';

export interface RestartPolicyOptions {
  /** The number of proof servers (default 1): their exits are counted per proof server. */
  proofServers?: number;
  /** Writer exits allowed within the window; one more stops the cluster (default 5). */
  maxWriterRestarts?: number;
  /** How long an exit counts, ms (default 60,000). */
  windowMs?: number;
  /** The delay after a first exit, ms (default 1,000). */
  firstDelayMs?: number;
  /** The longest delay before a proof server starts again, ms (default 10,000). */
  maxProofDelayMs?: number;
  /** The longest delay before the writer starts again, ms (default 30,000). */
  maxWriterDelayMs?: number;
  /** The clock, ms (default `Date.now`). */
  now?: () => number;
}

/** What to do about an exited process. */
export type RestartDecision =
  { restart: true; delayMs: number; recent: number } | { restart: false; recent: number };

/**
 * Counts exits per role and decides.
 * @example
 * ```ts
 * const policy = new RestartPolicy({ proofServers: 4 });
 * const next = policy.exited('proof'); // { restart: true, delayMs: 1000, recent: 1 }
 * ```
 */
export class RestartPolicy {
  readonly #exits: Record<Role, number[]> = { proof: [], writer: [] };
  readonly #options: Required<RestartPolicyOptions>;

  constructor(options: RestartPolicyOptions = {}) {
    this.#options = {
      proofServers: Math.max(1, options.proofServers ?? 1),
      maxWriterRestarts: options.maxWriterRestarts ?? 5,
      windowMs: options.windowMs ?? 60_000,
      firstDelayMs: options.firstDelayMs ?? 1_000,
      maxProofDelayMs: options.maxProofDelayMs ?? 10_000,
      maxWriterDelayMs: options.maxWriterDelayMs ?? 30_000,
      now: options.now ?? Date.now,
    };
  }

  /** The window, ms (for messages). */
  get windowMs(): number {
    return this.#options.windowMs;
  }

  /**
   * Records an exit of a `role` process and says whether to start it again, and after how
   * long; `recent` is the number of exits of that role within the window, this one included.
   */
  exited(role: Role): RestartDecision {
    const o = this.#options;
    const now = o.now();
    const exits = this.#exits[role];
    exits.push(now);
    while (exits.length > 0 && exits[0]! <= now - o.windowMs) exits.shift();
    const recent = exits.length;
    if (role === 'writer' && recent > o.maxWriterRestarts) return { restart: false, recent };
    // the nth exit of each proof server within the window waits as long as a lone one's nth
    const nth = role === 'proof' ? Math.ceil(recent / o.proofServers) : recent;
    const cap = role === 'proof' ? o.maxProofDelayMs : o.maxWriterDelayMs;
    return { restart: true, delayMs: Math.min(cap, o.firstDelayMs * 2 ** (nth - 1)), recent };
  }
}
