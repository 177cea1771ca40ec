/**
 * Keeps a server's audit blob cache warm: once the app is ready, the newest stored blobs are
 * read into it in the background, one at a time, while they fit (StoredAuditBlobs.warm); then
 * every `everyMs`, while the cache has room, the blobs of epochs published since. A flood of
 * audits then starts from memory: with a cold cache, every proof server read the whole range
 * from the store in the flood's first half second, and `/healthz` waited behind those reads
 * (up to 330 ms against 50 ms afterwards, over SQLite). Closing the app stops it without
 * waiting for a read in flight (a store that hangs must not hold the close); that read's end,
 * whatever it is, is then ignored.
 */

import type { FastifyInstance } from 'fastify';
import {
  StoredAuditBlobs,
  type AuditBlobCache,
  type StoredAuditBlobsSource,
} from '@akd-ts/directory';

/** How often a cache with room is filled again (new epochs), ms. */
export const AUDIT_WARM_EVERY_MS = 30_000;

/** A warmer's runs, for the code that installed it (tests wait on them). */
export interface AuditWarmer {
  /**
   * Starts a run unless one is under way or the cache is full (as the timer does), and
   * resolves once no run is left under way.
   */
  run(): Promise<void>;
}

export function warmAuditBlobs(
  app: FastifyInstance,
  directory: StoredAuditBlobsSource,
  cache: AuditBlobCache,
  everyMs = AUDIT_WARM_EVERY_MS,
): AuditWarmer {
  const blobs = new StoredAuditBlobs(directory, { cache });
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  // the epochs up to this one were warmed: later runs look only at newer ones
  let warmedTo = 0n;
  const warm = () => {
    if (running !== undefined || cache.stats().bytes >= cache.maxBytes) return;
    running = blobs
      .warm(stop.signal, warmedTo)
      .then(
        ({ read, latest }) => {
          if (!stop.signal.aborted) warmedTo = latest;
          if (read > 0) app.log.debug({ blobs: read }, 'audit blobs read into memory');
        },
        (err: unknown) => {
          // after the close the store may be closed under the read: nothing to report
          if (!stop.signal.aborted) app.log.warn({ err }, 'reading audit blobs into memory failed');
        },
      )
      .finally(() => {
        running = undefined;
      });
  };
  app.addHook('onReady', async () => {
    warm();
    timer = setInterval(warm, everyMs);
    timer.unref();
  });
  app.addHook('onClose', async () => {
    stop.abort();
    clearInterval(timer);
  });
  return {
    run: async () => {
      if (!stop.signal.aborted) warm();
      await running;
    },
  };
}
