/**
 * The entry that listens: puts a built app on a socket, keeps a read-only server's epochs
 * fresh by polling the store (another process publishes), and shuts down gracefully (stop
 * accepting, finish in-flight requests, stop polling, close the directory) on SIGINT/SIGTERM.
 */

import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { Directory } from '@akd-ts/directory';
import { buildApp } from './app.js';
import type { AppDeps } from './options.js';

export interface ListenOptions {
  /** Default 8080. 0 picks a free port. */
  port?: number;
  /** Default 127.0.0.1: reachable from this machine only (put a TLS proxy in front). */
  host?: string;
  /**
   * A listening socket handle to accept from instead of binding `port` (one received from
   * another process: cluster/connection-spread.ts).
   */
  handle?: unknown;
  /**
   * How often a read-only server checks the store for a new epoch, ms (default 1,000).
   * A writer (a `Directory`) sees its own publishes at once and does not poll.
   */
  pollMs?: number;
}

/** A listening server. */
export interface RunningServer {
  app: FastifyInstance;
  /** `http://host:port`, with the port actually bound. */
  url: string;
  /** Stops polling, closes the app (in-flight requests finish) and then the directory. */
  close(): Promise<void>;
}

/**
 * Builds the app over `deps` and listens.
 *
 * @example
 * ```ts
 * const server = await startServer({ directory }, { port: 8080 });
 * console.log(`serving on ${server.url}`);
 * ```
 */
export async function startServer(
  deps: AppDeps,
  options: ListenOptions = {},
): Promise<RunningServer> {
  const app = await buildApp(deps);
  const { directory } = deps;
  const polling = new AbortController();
  let poller: Promise<void> | undefined;
  try {
    const host = options.host ?? '127.0.0.1';
    await app.listen(
      options.handle === undefined
        ? { port: options.port ?? 8080, host }
        : ({ handle: options.handle, host } as { host: string }),
    );
  } catch (e) {
    await app.close();
    throw e;
  }
  if (!(directory instanceof Directory)) {
    poller = directory.pollForAzksChanges(
      options.pollMs ?? 1_000,
      polling.signal,
      (epoch) => app.log.info({ epoch: epoch.toString() }, 'new epoch'),
      (error) => app.log.warn({ err: error }, 'polling the store failed'),
    );
  }
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    app,
    url: `http://${host}:${address.port}`,
    close: () =>
      (closing ??= (async () => {
        polling.abort();
        await poller;
        await app.close();
        await directory.close();
      })()),
  };
}

/**
 * Closes `server` on the first SIGINT or SIGTERM, then calls `onClosed`.
 * @returns a function that removes the handlers
 * @example stopOnSignals(server, () => console.error('stopped'));
 */
export function stopOnSignals(
  server: Pick<RunningServer, 'close'>,
  onClosed: (signal: NodeJS.Signals, error?: unknown) => void,
  signals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM'],
): () => void {
  const handler = (signal: NodeJS.Signals) => {
    remove();
    server.close().then(
      () => onClosed(signal),
      (e: unknown) => onClosed(signal, e),
    );
  };
  const remove = () => {
    for (const s of signals) process.off(s, handler);
  };
  for (const s of signals) process.once(s, handler);
  return remove;
}
