/**
 * Audit blobs verified on worker threads. Blobs are independent once the chain of roots is
 * known, so an auditor hands each to a pool of threads running core's per-blob verification,
 * and core's chain accepts the results in epoch order (AuditChain.accept, and
 * walkAuditBlobs's `verifier` option): the chain's checks, its errors and its resume state
 * stay exactly those of a verification on one thread. A blob crosses as a copy of its bytes
 * (a few megabytes, against a fraction of a second of verification).
 */

import { Piscina } from 'piscina';
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

/** Verifies audit blobs, on worker threads or on the calling one. */
export interface AuditBlobVerifier {
  /** Verifies one blob (core's `verifyAuditBlob`, with its errors). */
  verify(blob: AuditBlob, options: VerifyAuditBlobOptions): Promise<VerifiedAuditBlob>;
  /** Worker threads in use (0: the calling thread). */
  readonly threads: number;
  /** Stops the threads, once the blobs being verified are done. */
  close(): Promise<void>;
}

/** The worker module next to this one, in whichever form (TypeScript source or build) runs. */
function workerFile(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./audit-verify-worker.${ext}`, import.meta.url);
}

/** Blobs smaller than this are verified on the calling thread: a copy and a task cost more. */
const MIN_WORKER_BLOB = 64 * 1024;

/**
 * A verifier with `threads` worker threads, started with the first blob of at least
 * `minBlobBytes` (default 64 KiB); smaller blobs, and every blob with 0 threads or a
 * configuration worker threads cannot rebuild (not one of the two built-in ones), are
 * verified on the calling thread.
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
  options: { threads: number; minBlobBytes?: number },
): AuditBlobVerifier {
  const description = describeConfig(config);
  const threads = Math.max(0, Math.floor(options.threads));
  const here = async (blob: AuditBlob, opts: VerifyAuditBlobOptions) =>
    verifyAuditBlob(config, blob, opts);
  if (threads === 0 || description === undefined) {
    return { threads: 0, verify: here, close: async () => {} };
  }
  const minBytes = options.minBlobBytes ?? MIN_WORKER_BLOB;
  let pool: Piscina | undefined;
  /** Tasks not yet answered: a pool destroyed under them would fail on their late answers. */
  const running = new Set<Promise<unknown>>();
  return {
    threads,
    verify: async (blob, opts) => {
      if (blob.data.length < minBytes) return here(blob, opts);
      pool ??= new Piscina({
        filename: workerFile().href,
        minThreads: threads,
        maxThreads: threads,
        idleTimeout: Number.POSITIVE_INFINITY,
      });
      const task: AuditVerifyTask = {
        config: description,
        name: blob.name,
        data: blob.data,
        options: opts,
      };
      const run = pool.run(task);
      running.add(run);
      const result = (await run.finally(() => running.delete(run))) as
        VerifiedAuditBlob | { error: TaskError };
      if ('error' in result) throw fromTaskError(result.error);
      return result;
    },
    close: async () => {
      await Promise.allSettled(running);
      await pool?.destroy();
    },
  };
}
