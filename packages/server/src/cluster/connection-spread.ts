/**
 * Spreading connections over the proof servers without handing them through the primary.
 * Proof servers accept from the listening socket themselves (a new connection, a health
 * probe's included, goes to whichever proof server is free to take it first), but a burst of
 * connections on idle proof servers then lands mostly on one: the first one woken accepts
 * everything queued, dozens in one go. So each proof server has a limit, its fair share of
 * the open connections plus a slack; one that accepts a connection beyond it stops accepting
 * at once, before the next one (it closes its copy of the listening socket; its open
 * connections go on), and the others take the new ones. The primary keeps a copy of the
 * listening socket that it never accepts from, so that the socket stays open while every
 * proof server has stopped (connections then wait in its queue), and hands a copy to each
 * proof server it lets accept again: one back within its limit (the limit rises as the others
 * take connections, or its own close). A proof server is thus stopped only while it holds
 * more than its limit, and a health probe's new connection can go to whichever proof server
 * is free first nearly all the time.
 *
 * This module is the primary's arithmetic: the counts the proof servers report, the limits
 * it sends them, and which ones start accepting again.
 */

/** What the primary tells one proof server. */
export interface AcceptOrder<W> {
  worker: W;
  /** Start accepting again (with a copy of the listening socket). */
  start: boolean;
  /** The connections it may hold before it stops accepting. */
  limit: number;
}

/** `yes`: accepting; `no`: stopped; `starting`: told to start, not confirmed yet. */
type Listening = 'yes' | 'no' | 'starting';

interface State {
  connections: number;
  listening: Listening;
  /** The limit last sent. */
  limit: number;
}

/**
 * Connections above the fair share that a proof server may hold before it stops accepting:
 * enough that a health probe or a few short connections do not stop and start it, and that
 * a burst from idle is spread in a few rounds.
 */
export function slackOver(fairShare: number): number {
  return Math.max(4, fairShare / 8);
}

/**
 * The primary's view of which proof servers accept, and the orders that keep connections
 * spread (see the module comment). Limits are sent only once `enable` is called (the primary
 * holds its copy of the socket and every proof server listens); until then none stops.
 *
 * @example
 * ```ts
 * const spread = new ConnectionSpread<Worker>();
 * spread.add(a); spread.add(b); spread.enable();
 * for (const o of spread.report(a, 20)) send(o.worker, o);
 * ```
 */
export class ConnectionSpread<W> {
  readonly #workers = new Map<W, State>();
  #enabled = false;

  /** Proof servers accepting now (as confirmed). */
  get accepting(): W[] {
    return [...this.#workers].filter(([, s]) => s.listening === 'yes').map(([w]) => w);
  }

  /** From now on, proof servers get limits. */
  enable(): AcceptOrder<W>[] {
    this.#enabled = true;
    return this.#orders();
  }

  /** A proof server that listens. */
  add(worker: W): AcceptOrder<W>[] {
    this.#workers.set(worker, { connections: 0, listening: 'yes', limit: Infinity });
    return this.#orders();
  }

  /** A proof server that is gone. */
  remove(worker: W): AcceptOrder<W>[] {
    this.#workers.delete(worker);
    return this.#orders();
  }

  /** A proof server's count of open connections. */
  report(worker: W, connections: number): AcceptOrder<W>[] {
    const state = this.#workers.get(worker);
    if (state === undefined) return [];
    state.connections = connections;
    return this.#orders();
  }

  /**
   * A proof server accepts (`true`: after a start) or stopped (past its limit, or a failed
   * start), holding `connections` then.
   */
  confirm(worker: W, listening: boolean, connections?: number): AcceptOrder<W>[] {
    const state = this.#workers.get(worker);
    if (state === undefined) return [];
    state.listening = listening ? 'yes' : 'no';
    if (connections !== undefined) state.connections = connections;
    return this.#orders();
  }

  #orders(): AcceptOrder<W>[] {
    const all = [...this.#workers];
    if (!this.#enabled || all.length === 0) return [];
    const fair = all.reduce((sum, [, s]) => sum + s.connections, 0) / all.length;
    // alone, a proof server never stops: nobody else would take the new connections
    const limit = all.length === 1 ? Infinity : Math.floor(fair + slackOver(fair));
    // a stopped one back within its limit starts again; when all have stopped, the least
    // loaded always is (no more than the mean), so one at least accepts again
    const starts = new Set<W>();
    for (const [worker, s] of all) {
      if (s.listening === 'no' && s.connections <= limit) starts.add(worker);
    }
    const orders: AcceptOrder<W>[] = [];
    for (const [worker, s] of all) {
      const start = starts.has(worker);
      if (!start && s.limit === limit) continue;
      if (start) s.listening = 'starting';
      s.limit = limit;
      orders.push({ worker, start, limit });
    }
    return orders;
  }
}
