/**
 * Audit blobs read on a worker thread. A stored audit step is megabytes spread over SQLite
 * overflow pages; reading one takes 20-50 ms, during which a synchronous driver holds the
 * event loop. A server streaming audits would then make every other request (health checks
 * included) wait behind those reads: a proof server under eight concurrent audits answered
 * `/healthz` in 0.4-1 s. Here the reads run on a thread of their own, over a connection of
 * its own, and the calling thread only receives the bytes.
 *
 * Stored blobs never change once written (spec: one per published epoch), so the second
 * connection cannot see another version of one than the caller's would. When the thread is
 * gone (it failed, or the store was closed), reads fall back to the caller's connection.
 */

import { Worker } from 'node:worker_threads';
import { AkdError } from '@akd-ts/core';

/** A row as the thread answers it (SELECT_AUDIT_BLOB_SQL), or undefined for none. */
export type BlobRow = readonly unknown[] | undefined;

interface Answer {
  id: number;
  row?: unknown[];
  error?: { message: string; code?: unknown };
}

/**
 * The thread's code: the worker module beside this one, imported. From the sources (under
 * tsx) the thread registers tsx first, since a thread does not inherit the loader that
 * compiles TypeScript.
 */
function entry(): string {
  const here = import.meta.url;
  const fromSource = here.endsWith('.ts');
  const script = new URL(`./blob-thread-worker.${fromSource ? 'ts' : 'js'}`, here).href;
  const load = `import(${JSON.stringify(script)})`;
  return fromSource ? `import('tsx/esm/api').then((m) => m.register()).then(() => ${load})` : load;
}

export class BlobThread {
  readonly #worker: Worker;
  readonly #pending = new Map<
    number,
    { resolve: (row: BlobRow) => void; reject: (e: Error) => void }
  >();
  #next = 1;
  #gone: string | undefined;

  /**
   * Starts the thread on the store at `path` (a file, opened read-only there).
   * @example const thread = new BlobThread('./akd.db', { cacheSizeKiB: 1024, busyTimeoutMs: 5000 });
   */
  constructor(path: string, options: { cacheSizeKiB: number; busyTimeoutMs: number }) {
    // reads asked for before the module has loaded wait in the thread's message queue
    this.#worker = new Worker(entry(), {
      eval: true,
      workerData: { path, ...options },
    });
    // an idle thread keeps no process alive
    this.#worker.unref();
    this.#worker.on('message', (answer: Answer) => {
      const pending = this.#pending.get(answer.id);
      if (pending === undefined) return;
      this.#pending.delete(answer.id);
      if (answer.error === undefined) pending.resolve(answer.row);
      else if (answer.error.code === 'STORAGE_CORRUPT') {
        // a blob whose parts do not add up: the same error a read here would give
        pending.reject(new AkdError('STORAGE_CORRUPT', answer.error.message));
      } else {
        pending.reject(Object.assign(new Error(answer.error.message), { code: answer.error.code }));
      }
      if (this.#pending.size === 0) this.#worker.unref();
    });
    this.#worker.on('error', (e) => this.#end(`it failed: ${e.message}`));
    this.#worker.on('exit', (code) => this.#end(`it exited (code ${code})`));
  }

  /** Why the thread no longer reads, or undefined while it does. */
  get gone(): string | undefined {
    return this.#gone;
  }

  #end(why: string): void {
    this.#gone ??= why;
    for (const { reject } of this.#pending.values()) {
      reject(new Error(`the audit blob reader thread stopped: ${this.#gone}`));
    }
    this.#pending.clear();
  }

  /**
   * The row of the audit blob of `epoch`, or undefined when none is stored.
   * @throws Error the driver's error, or that the thread stopped (see {@link gone})
   */
  read(epoch: bigint): Promise<BlobRow> {
    if (this.#gone !== undefined) {
      return Promise.reject(new Error(`the audit blob reader thread stopped: ${this.#gone}`));
    }
    const id = this.#next++;
    return new Promise<BlobRow>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.ref();
      this.#worker.postMessage({ id, epoch });
    });
  }

  /** Stops the thread; reads in flight are refused. */
  async close(): Promise<void> {
    this.#end('the store was closed');
    await this.#worker.terminate();
  }
}
