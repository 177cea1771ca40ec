/**
 * A proof server of `akd serve`: one of N processes answering the API over the store (a
 * connection of its own, read-only, without the VRF secret: it serves the VRF proofs the
 * writer stored), all listening on one port (node:cluster shares it). It
 * never publishes: `POST /v1/publish` goes, unread, to the writer whose state the primary
 * relays. It learns of new epochs from the primary as soon as the writer commits one (and
 * polls the store for epochs published by other processes). Stopping, it first reports not
 * ready for `drainMs` so load balancers move away, then finishes the requests in flight.
 */

import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { configurationByName, fromHex } from '@akd-ts/core';
import { StorageManager, type CacheOptions, type Database } from '@akd-ts/storage';
import { ReadOnlyDirectory } from '@akd-ts/directory';
import { startServer } from '../listen.js';
import { witnessRelayOf } from '../witness/relay.js';
import { HttpError } from '../errors.js';
import { WriterClient, type WakeWriter } from '../writer/writer-client.js';
import { gateAccepting } from './accept-gate.js';
import {
  DEFAULT_MEMORY_PROOF_CACHE_BYTES,
  DEFAULT_PROOF_CACHE_BYTES,
  type FromChild,
  type ServeConfig,
  type WriterView,
} from './messages.js';

export interface ProofRoleOptions {
  config: ServeConfig;
  db: Database;
  logger: Logger;
  /** The writer as last reported (publishing servers only). */
  writer?: WriterView;
  /** Messages to the primary (connection counts, accept confirmations), with a handle. */
  send: (message: FromChild, handle?: unknown) => void;
  /** A copy of the listening socket to accept from (else it listens on the configured port). */
  socket?: unknown;
}

export interface ProofRole {
  url: string;
  /** The writer's new state. */
  setWriter(view: WriterView): void;
  /** The primary's order: a limit of connections, and a socket to accept from again. */
  accept(limit: number, socket?: unknown): void;
  /** Serves the store's latest epoch from the next request on. */
  refresh(): Promise<void>;
  /** Drains, then closes the server and the store. */
  stop(): Promise<void>;
}

/**
 * The record cache of a proof server: bounded (see {@link DEFAULT_PROOF_CACHE_BYTES} and, over
 * a memory store, {@link DEFAULT_MEMORY_PROOF_CACHE_BYTES}), or none. Over a SQL store it keeps
 * tree nodes as bytes (`CacheOptions.compactNodes`): a record the cache lacks costs a query
 * there, and the same memory then holds about 3.4 times the records. Over a memory store,
 * whose replica answers a miss in microseconds, it keeps objects and decodes nothing.
 */
export function proofCache(bytes: number | undefined, memory = false): CacheOptions | false {
  const limit = bytes ?? (memory ? DEFAULT_MEMORY_PROOF_CACHE_BYTES : DEFAULT_PROOF_CACHE_BYTES);
  if (limit === 0) return false;
  return memory ? { memoryLimitBytes: limit } : { memoryLimitBytes: limit, compactNodes: true };
}

/**
 * How long a publish waits for a sleeping writer to start, ms: a memory store's writer loads
 * a snapshot of the whole store first (a few seconds for hundreds of thousands of labels).
 */
const WAKE_TIMEOUT_MS = 60_000;

/** Starts a proof server over `options.db`. */
export async function startProofRole(options: ProofRoleOptions): Promise<ProofRole> {
  const { config } = options;
  const directory = await ReadOnlyDirectory.open({
    config: configurationByName(config.configuration, config.domainLabel),
    storage: new StorageManager(options.db, {
      cache: proofCache(config.cacheBytes, config.storeUrl.startsWith('memory:')),
    }),
    // no key here: lookups and histories serve the VRF proofs the writer stored
    publicKey: fromHex(config.publicKey),
  });
  let writer: WriterView = options.writer ?? {
    socketPath: undefined,
    problem: 'the writer is starting',
  };
  let draining = false;
  // publishes waiting for a sleeping writer to start (a memory store's writer)
  const woken = new Set<() => void>();
  const wake: WakeWriter = (refused) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (
          writer.problem === undefined &&
          (writer.socketPath === undefined || writer.socketPath === refused)
        ) {
          return;
        }
        clearTimeout(timer);
        woken.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        woken.delete(check);
        reject(
          new HttpError('HTTP_WRITER_UNAVAILABLE', 'the writer did not start in time', {
            'retry-after': '5',
          }),
        );
      }, WAKE_TIMEOUT_MS);
      woken.add(check);
      options.send({ type: 'wake-writer' });
      check();
    });
  const server = await startServer(
    {
      directory,
      publishToken: config.publishToken,
      ...(config.publishToken === undefined
        ? {}
        : { writer: new WriterClient(() => writer, wake) }),
      logger: options.logger,
      limits: config.limits,
      http: config.http,
      ...(config.auditCacheBytes === undefined
        ? {}
        : { auditBlobCacheBytes: config.auditCacheBytes }),
      readiness: () => (draining ? 'shutting down' : undefined),
      ...(config.witnesses === undefined ? {} : { witnesses: witnessRelayOf(config.witnesses) }),
    },
    { port: config.port, host: config.host, pollMs: config.pollMs, handle: options.socket },
  );
  const gate = gateAccepting({
    server: server.app.server,
    listen: { port: config.port, host: config.host },
    onConnections: (count) => options.send({ type: 'connections', count }),
    onAccepting: (on, error) => {
      if (error !== undefined) {
        options.logger.warn({ err: error }, 'listening again for new connections failed');
      }
      options.send({ type: 'accepting', on, count: gate.connections });
    },
  });
  if (options.socket === undefined) {
    // the first proof server to listen: the primary keeps a copy of the socket (it never
    // accepts from it) and hands copies to proof servers that start accepting again
    options.send(
      { type: 'socket' },
      (server.app.server as unknown as { _handle: unknown })._handle,
    );
  }
  return {
    url: server.url,
    setWriter: (view) => {
      writer = view;
      for (const check of woken) check();
    },
    accept: (limit, socket) => {
      gate.limit = limit;
      if (socket !== undefined) gate.start(socket);
    },
    refresh: async () => {
      await directory.refresh();
    },
    stop: async () => {
      gate.stop();
      draining = true;
      await delay(config.drainMs ?? 0);
      await server.close();
      await options.db.close();
    },
  };
}
