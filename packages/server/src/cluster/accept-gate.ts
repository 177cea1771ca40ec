/**
 * A proof server's side of spreading connections (connection-spread.ts): it counts its open
 * connections and reports the count (at most once per event-loop turn); when it accepts a
 * connection beyond its limit it stops accepting at once, keeping the connections it has, and
 * it starts again on the primary's order, on the copy of the listening socket sent with it.
 *
 * Stopping closes only this process's copy of the listening socket, the way `net.Server#close`
 * does; the HTTP server's own `close` would also end its idle keep-alive connections and its
 * timeout checks. Closing it from the connection event stops libuv's accept loop before the
 * next queued connection, which another proof server then takes.
 */

import { Server, type ListenOptions } from 'node:net';

export interface AcceptGate {
  /** Open connections now. */
  readonly connections: number;
  /** Whether the server accepts new connections now. */
  readonly accepting: boolean;
  /** The connections it may hold before it stops accepting (default: no limit). */
  limit: number;
  /**
   * Starts accepting again on `handle` (a copy of the listening socket; without one, with
   * the options of the first listen); `onAccepting` confirms.
   */
  start(handle?: unknown): void;
  /** No more starts and stops (the server is stopping). */
  stop(): void;
}

export interface AcceptGateOptions {
  /** The listening server (an HTTP server), as it was started. */
  server: Server;
  /** The options it was started with. */
  listen: ListenOptions;
  /** The count of open connections, when it changed (at most once per event-loop turn). */
  onConnections: (count: number) => void;
  /**
   * After each change: whether the server accepts now (false: it stopped at its limit, or
   * starting failed, with the error).
   */
  onAccepting: (accepting: boolean, error?: Error) => void;
}

/**
 * Counts `options.server`'s connections and stops and starts its accepting.
 *
 * @example
 * ```ts
 * const gate = gateAccepting({ server: app.server, listen: { port, host },
 *   onConnections: (count) => send({ type: 'connections', count }),
 *   onAccepting: (on) => send({ type: 'accepting', on }) });
 * gate.limit = 30;
 * ```
 */
export function gateAccepting(options: AcceptGateOptions): AcceptGate {
  const { server } = options;
  let connections = 0;
  let reported = 0;
  let scheduled = false;
  let accepting = server.listening;
  let stopped = false;
  let starting = false;
  let limit = Infinity;

  const report = () => {
    scheduled = false;
    if (connections === reported || stopped) return;
    reported = connections;
    options.onConnections(connections);
  };
  const changed = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(report);
  };
  const close = () => {
    // the listening socket only (see the module comment)
    Server.prototype.close.call(server);
    accepting = false;
    options.onAccepting(false);
  };
  server.on('connection', (socket: NodeJS.EventEmitter) => {
    connections++;
    changed();
    socket.once('close', () => {
      connections--;
      changed();
    });
    if (accepting && !stopped && connections > limit) close();
  });

  return {
    get connections() {
      return connections;
    },
    get accepting() {
      return accepting;
    },
    get limit() {
      return limit;
    },
    set limit(value: number) {
      limit = value;
    },
    start(handle) {
      if (stopped || starting || accepting) {
        // a copy not needed: closed, so that the descriptor does not leak
        (handle as { close?: () => void } | undefined)?.close?.();
        if (accepting) options.onAccepting(true);
        return;
      }
      starting = true;
      const done = (error?: Error) => {
        server.off('listening', onListening);
        server.off('error', onError);
        starting = false;
        accepting = error === undefined;
        options.onAccepting(accepting, error);
      };
      const onListening = () => done();
      const onError = (error: Error) => done(error);
      server.once('listening', onListening);
      server.once('error', onError);
      server.listen(handle === undefined ? options.listen : (handle as object));
    },
    stop() {
      stopped = true;
    },
  };
}
