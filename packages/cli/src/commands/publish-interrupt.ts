/**
 * What `akd publish` says when it is interrupted (Ctrl-C, SIGTERM): whether anything was
 * published. A publish writes its epoch in one transaction at the end, so an interrupt before
 * the commit publishes nothing, and the store stays consistent at the epoch it had. After
 * saying so, the signal is raised again with its default action, so the process still ends
 * as interrupted (status 130 in a shell for SIGINT) and callers see the signal.
 */

import type { PublishProgress } from '@akd-ts/directory';
import type { TextSink } from '../io.js';

/** How far a publish has got, as its progress callbacks and the command report it. */
export interface PublishState {
  /** The store, as --db named it. */
  store: string;
  /** The latest epoch before the publish, once the store is open. */
  before?: bigint;
  /** The phase the publish last reported. */
  phase?: PublishProgress['phase'];
  /** Set once the publish has returned. */
  finished?: boolean;
  /** The epoch whose VRF proofs are being stored, once it committed (until they are). */
  proving?: bigint;
}

/**
 * The line printed on an interrupt.
 *
 * @example interruptMessage({ store: 'sqlite:./akd.db', before: 3n, phase: 'vrf' })
 * // 'interrupted before committing: nothing was published; sqlite:./akd.db stays at epoch 3'
 */
export function interruptMessage(state: PublishState): string {
  const { store, before, phase, finished } = state;
  if (before === undefined) {
    return `interrupted before the store was opened: nothing was published to ${store}`;
  }
  const next = before + 1n;
  if (state.proving !== undefined) {
    return (
      `interrupted while storing the VRF proofs of epoch ${state.proving}: the epoch is ` +
      'published; servers without the VRF key serve it once the next writer (akd publish, ' +
      'akd serve) has stored them'
    );
  }
  if (finished === true || phase === 'done') {
    return `interrupted after the publish ended: ${store} is at the epoch it reported (akd epoch shows it)`;
  }
  if (phase === 'commit') {
    return (
      `interrupted while committing epoch ${next}: a commit is one transaction, so epoch ` +
      `${next} is published whole or not at all (akd epoch --db ${store} shows which)`
    );
  }
  return `interrupted before committing: nothing was published; ${store} stays at epoch ${before}`;
}

/** The part of `process` an interrupt handler uses (tests pass their own). */
export interface SignalTarget {
  once(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  off(signal: NodeJS.Signals, listener: (signal: NodeJS.Signals) => void): unknown;
  kill(pid: number, signal: NodeJS.Signals): unknown;
  pid: number;
}

const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * Until the returned function is called, SIGINT and SIGTERM print `interruptMessage(state)`
 * on `sink` and then end the process by the same signal.
 *
 * @example
 * ```ts
 * const stop = sayWhenInterrupted(state, io.stderr);
 * try { await publish() } finally { stop() }
 * ```
 */
export function sayWhenInterrupted(
  state: PublishState,
  sink: TextSink,
  target: SignalTarget = process,
): () => void {
  const remove = () => {
    for (const s of SIGNALS) target.off(s, handler);
  };
  const handler = (signal: NodeJS.Signals) => {
    remove();
    // the progress line may be half written: start on a line of our own
    sink.write(`\n${interruptMessage(state)}\n`);
    target.kill(target.pid, signal);
  };
  for (const s of SIGNALS) target.once(s, handler);
  return remove;
}
