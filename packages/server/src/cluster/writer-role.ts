/**
 * The writer process of `akd serve`: the one process that publishes. It opens its own store
 * connection, takes the store's writer lock, holds the VRF key, and serves the private
 * publish app on a Unix socket in a folder only its user can enter (made by the primary). It
 * runs at a lower CPU priority than the proof servers (nice 10 by default), so a long publish
 * slows itself rather than the lookups. It reports its state to the primary: ready, the lock lost and being taken
 * again, or lost for good (then it stops, and `akd serve` with it), or the store fenced (then
 * it stops, and the proof servers go on with publishing refused). After start it fills in the
 * audit blobs of epochs published before the store kept them, one step between publishes.
 */

import { rmSync } from 'node:fs';
import { setPriority } from 'node:os';
import type { Logger } from 'pino';
import { configurationByName, isAkdError } from '@akd-ts/core';
import { StorageManager, isWriterFenced, type Database } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore, availableThreads } from '@akd-ts/directory';
import { buildWriterApp } from '../writer/writer-app.js';
import {
  DEFAULT_WRITER_RECYCLE_MB,
  DEFAULT_WRITER_SLEEP_MS,
  type FromChild,
  type ServeConfig,
  type WriterView,
} from './messages.js';

export interface WriterRoleOptions {
  config: ServeConfig;
  secretKey: Uint8Array;
  db: Database;
  logger: Logger;
  send: (message: FromChild) => void;
  /** Resolves once every proof server serves `epoch`. */
  waitForEpoch: (epoch: string) => Promise<void>;
  /** It takes over from this server's previous writer: it waits for the lock. */
  handover?: boolean;
  /** Where it listens: a socket in a private folder, which the primary made. */
  socketPath: string;
}

/** A running writer: `stop` finishes or abandons the publish in progress, then releases all. */
export interface WriterRole {
  stop(): Promise<void>;
}

/**
 * Gives back the memory of the publishes just finished. A publish caches every record it read
 * or wrote (hundreds of MB for an epoch of 100,000 labels) and the next one reads again what it
 * needs, so the writer drops its cache; then, when the process was started with `--expose-gc`
 * (the cluster starts its writer so), a full collection lets V8 return the heap those records
 * filled: an idle process is not collected on its own, and would hold it until the next
 * publish.
 */
export function releaseMemory(directory: Directory, logger: Logger): void {
  // a publish queued meanwhile keeps what it preloaded
  if (directory.storage.isTransactionActive()) return;
  directory.storage.flushCache();
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return;
  const before = process.memoryUsage().rss;
  gc();
  const after = process.memoryUsage().rss;
  logger.debug({ rssBefore: before, rssAfter: after }, 'writer memory released');
}

/** How long a writer taking over waits for the previous one to release the lock, ms. */
const HANDOVER_MS = 600_000;

/**
 * Opens the directory once the writer lock is free: says it is ready (`ready`: the previous
 * writer may then finish its publish and stop), then `open` again every 50 ms while it says
 * `STORAGE_LOCKED`, for at most {@link HANDOVER_MS}.
 * @throws AkdError `STORAGE_LOCKED` when the lock stays held (another writer took it), and
 * at once when the store is fenced (a WriterFencedError)
 */
export async function openWhenHandedOver(
  open: () => Promise<Directory>,
  ready: () => void,
  deadlineMs = HANDOVER_MS,
): Promise<Directory> {
  const deadline = Date.now() + deadlineMs;
  ready();
  for (;;) {
    try {
      return await open();
    } catch (e) {
      // a fenced store never comes free: waiting would only load the database
      if (!isAkdError(e, 'STORAGE_LOCKED') || isWriterFenced(e) || Date.now() > deadline) throw e;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * Starts the writer.
 * @throws AkdError `STORAGE_LOCKED` when another writer holds the store.
 */
export async function startWriterRole(options: WriterRoleOptions): Promise<WriterRole> {
  const { config, logger, send } = options;
  try {
    // threads started from now on (VRF workers, libuv) inherit this priority
    setPriority(config.writerNice ?? 10);
  } catch (e) {
    logger.warn({ err: e }, 'cannot lower the writer priority');
  }
  const open = () =>
    Directory.open({
      config: configurationByName(config.configuration, config.domainLabel),
      storage: new StorageManager(options.db),
      vrfKeys: new InMemoryVrfKeyStore(options.secretKey),
      vrf: { threads: config.vrfThreads ?? availableThreads() },
    });
  const { socketPath } = options;
  /** The store is fenced: the primary is told, and stops this writer (there is no other). */
  const fenced = (reason: string) => {
    logger.error({ reason }, 'the store is fenced: publishing is over on this server');
    send({ type: 'writer', writer: { socketPath: undefined, problem: reason, fenced: true } });
    send({ type: 'fenced', reason });
  };
  let directory: Directory;
  try {
    directory =
      options.handover === true
        ? await openWhenHandedOver(open, () => send({ type: 'lock-waiting' }))
        : await open();
  } catch (e) {
    if (!isWriterFenced(e) || !e.storeFenced) throw e;
    fenced(e.message);
    return { stop: () => options.db.close() };
  }
  const view = (): WriterView => {
    const lock = directory.lockStatus();
    if (lock.fenced === true) return { socketPath: undefined, problem: lock.reason, fenced: true };
    return { socketPath, problem: lock.held ? undefined : lock.reason };
  };
  // set by stop(): the lock then ends because this writer releases it, which is no loss
  let stopping = false;
  directory.onLockStatus((status) => {
    if (stopping) return;
    if (status.fenced === true) return fenced(status.reason ?? 'the store is fenced');
    if (status.held) logger.info({ generation: status.generation }, 'writer lock held again');
    else if (status.final) logger.error({ reason: status.reason }, 'writer lock lost for good');
    else logger.warn({ reason: status.reason }, 'writer lock lost; taking it again');
    send({ type: 'writer', writer: view() });
    if (status.final) {
      send({ type: 'fatal', message: `STORAGE_LOCKED: the writer stopped: ${status.reason}` });
    }
  });
  const app = await buildWriterApp({
    directory,
    limits: config.limits,
    logger,
    onPublished: (json) => options.waitForEpoch(json.epoch),
    onIdle: () => {
      releaseMemory(directory, logger);
      handOverIfLarge();
    },
  });
  // A memory store's writer holds a whole copy of the store: once idle for its sleep time it
  // tells the primary, which stops it and starts it again for the next publish.
  const memory = config.storeUrl.startsWith('memory:');
  const sleepMs = memory ? (config.writerSleepMs ?? DEFAULT_WRITER_SLEEP_MS) : 0;
  let sleepTimer: NodeJS.Timeout | undefined;
  const sleepSoon = () => {
    clearTimeout(sleepTimer);
    if (sleepMs === 0 || stopping) return;
    sleepTimer = setTimeout(() => {
      // a publish forwarded to this writer holds a connection until it is answered
      app.server.getConnections((error, count) => {
        if (error !== null || count > 0) sleepSoon();
        else if (!stopping) {
          send({ type: 'idle' });
          // the primary keeps a writer that is the store's only copy: asked again later
          sleepSoon();
        }
      });
    }, sleepMs);
  };
  app.addHook('onRequest', async () => clearTimeout(sleepTimer));
  app.addHook('onResponse', async () => sleepSoon());
  // A SQLite or PostgreSQL writer keeps what its publishes left with the allocator: past a
  // bound, a new writer process takes over (the primary starts it; it waits for the lock,
  // which this one releases as it stops), and the memory goes with this process.
  const recycleBytes = memory
    ? 0
    : (config.writerRecycleMb ?? DEFAULT_WRITER_RECYCLE_MB) * 1024 * 1024;
  let handingOver = false;
  const handOverIfLarge = () => {
    if (recycleBytes === 0 || handingOver || stopping) return;
    const rss = process.memoryUsage().rss;
    if (rss <= recycleBytes) return;
    handingOver = true;
    logger.info({ rss }, 'the writer hands over to a new writer process, to give back memory');
    send({ type: 'recycle' });
  };
  await app.listen({ path: socketPath });
  send({ type: 'writer', writer: view() });

  const filling = new AbortController();
  const fill = directory
    .fillMissingAuditBlobs({
      signal: filling.signal,
      onBlob: (epoch) => logger.info({ epoch: epoch.toString() }, 'audit blob filled in'),
    })
    .then(
      (n) => n > 0 && logger.info({ blobs: n }, 'audit blobs filled in'),
      (e: unknown) => logger.error({ err: e }, 'filling in audit blobs failed'),
    )
    .finally(() => {
      releaseMemory(directory, logger);
      sleepSoon();
    });

  return {
    stop: async () => {
      stopping = true;
      clearTimeout(sleepTimer);
      filling.abort();
      await app.close(); // waits for a publish in progress
      await fill;
      await directory.close();
      await options.db.close();
      rmSync(socketPath, { force: true });
    },
  };
}
