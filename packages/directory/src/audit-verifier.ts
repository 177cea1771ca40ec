/**
 * Audit blobs verified on worker threads. Blobs are independent once the chain of roots is
 * known, so an auditor hands each to a pool of threads running core's per-blob verification,
 * and core's chain accepts the results in epoch order (AuditChain.accept, and
 * walkAuditBlobs's `verifier` option): the chain's checks, its errors and its resume state
 * stay exactly those of a verification on one thread. A blob crosses as a copy of its bytes
 * (a few megabytes, against a fraction of a second of verification).
 */

import type { Piscina } from 'piscina';
import {
  verifyAuditBlob,
  type AuditBlob,
  type Configuration,
  type VerifiedAuditBlob,
  type VerifyAuditBlobOptions,
} from '@akd-ts/core';
import type { AuditVerifyTask } from './audit-verify-worker.js';
import { fromTaskError, type TaskError } from './tree/arena/tasks.js';
import { describeConfig } from './worker-config.js';
import { openPool, workerScript } from './worker-pool.js';

/** Verifies audit blobs, on worker threads or on the calling one. */
export interface AuditBlobVerifier {
  /** Verifies one blob (core's `verifyAuditBlob`, with its errors). */
  verify(blob: AuditBlob, options: VerifyAuditBlobOptions): Promise<VerifiedAuditBlob>;
  /** Worker threads in use (0: the calling thread). */
  readonly threads: number;
  /** Stops the threads, once the blobs being verified are done. */
  close(): Promise<void>;
}

/** The name warnings and errors give this pool. */
const POOL = 'audit verification';

/** Blobs smaller than this are verified on the calling thread: a copy and a task cost more. */
const MIN_WORKER_BLOB = 64 * 1024;

/**
 * A verifier with `threads` worker threads, started with the first blob of at least
 * `minBlobBytes` (default 64 KiB); smaller blobs, and every blob with 0 threads or a
 * configuration worker threads cannot rebuild (not one of the two built-in ones), are
 * verified on the calling thread. So is every blob when the worker script cannot load (a
 * bundled build: one process warning), unless `requireWorkers` makes that a
 * WorkersUnavailableError.
 *
 * @example
 * ```ts
 * const verifier = createAuditBlobVerifier(config, { threads: 2 });
 * await walkAuditBlobs(chain, source, { verifier: verifier.verify, concurrency: 4 });
 * await verifier.close();
 * ```
 */
export function createAuditBlobVerifier(
  config: Configuration,
  options: { threads: number; minBlobBytes?: number; requireWorkers?: boolean },
): AuditBlobVerifier {
  const description = describeConfig(config);
  const threads = Math.max(0, Math.floor(options.threads));
  const here = async (blob: AuditBlob, opts: VerifyAuditBlobOptions) =>
    verifyAuditBlob(config, blob, opts);
  if (threads === 0 || description === undefined) {
    return { threads: 0, verify: here, close: async () => {} };
  }
  const minBytes = options.minBlobBytes ?? MIN_WORKER_BLOB;
  let pool: Promise<Piscina | undefined> | undefined;
  let started: Piscina | undefined;
  const start = async (): Promise<Piscina | undefined> =>
    (started = await openPool(
      POOL,
      workerScript(import.meta.url, 'audit-verify-worker'),
      { minThreads: threads, maxThreads: threads, idleTimeout: Number.POSITIVE_INFINITY },
      options.requireWorkers ?? false,
    ));
  /** Tasks not yet answered: a pool destroyed under them would fail on their late answers. */
  const running = new Set<Promise<unknown>>();
  return {
    threads,
    verify: async (blob, opts) => {
      if (blob.data.length < minBytes) return here(blob, opts);
      const workers = await (pool ??= start());
      if (workers === undefined) return here(blob, opts);
      const task: AuditVerifyTask = {
        config: description,
        name: blob.name,
        data: blob.data,
        options: opts,
      };
      const run = workers.run(task);
      running.add(run);
      const result = (await run.finally(() => running.delete(run))) as
        VerifiedAuditBlob | { error: TaskError };
      if ('error' in result) throw fromTaskError(result.error);
      return result;
    },
    close: async () => {
      await Promise.allSettled(running);
      await pool?.catch(() => undefined);
      await started?.destroy();
    },
  };
}
