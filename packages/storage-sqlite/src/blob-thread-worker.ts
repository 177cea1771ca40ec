/**
 * The worker thread of blob-thread.ts: a read-only connection of its own to the store,
 * answering `{ id, epoch }` with the audit blob's row (or none) and its whole data, joined
 * from its parts, the data's memory moved to the caller rather than copied.
 */

import { parentPort, workerData } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { readAuditBlobRow } from './audit-blob-parts.js';
import { SELECT_AUDIT_BLOB_PARTS_SQL, SELECT_AUDIT_BLOB_SQL } from './sql.js';

const { path, cacheSizeKiB, busyTimeoutMs } = workerData as {
  path: string;
  cacheSizeKiB: number;
  busyTimeoutMs: number;
};
const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true });
db.pragma(`busy_timeout = ${busyTimeoutMs}`);
db.pragma(`cache_size = -${cacheSizeKiB}`);
db.defaultSafeIntegers(true);
const read = {
  row: db.prepare(SELECT_AUDIT_BLOB_SQL).raw(true),
  parts: db.prepare(SELECT_AUDIT_BLOB_PARTS_SQL).raw(true),
};
// one snapshot for the row and its parts: a retried publish may write the blob again
const readBlob = db.transaction((epoch: bigint) => readAuditBlobRow(read, epoch));

parentPort!.on('message', ({ id, epoch }: { id: number; epoch: bigint }) => {
  try {
    const row = readBlob(epoch);
    const data = row?.[3];
    // the driver gives a large blob a buffer of its own: move it; copy anything smaller
    const move =
      data instanceof Uint8Array &&
      data.byteOffset === 0 &&
      data.byteLength === data.buffer.byteLength &&
      data.buffer instanceof ArrayBuffer
        ? [data.buffer]
        : [];
    parentPort!.postMessage({ id, row }, move);
  } catch (e) {
    const error = e as { message?: unknown; code?: unknown };
    parentPort!.postMessage({
      id,
      error: { message: String(error.message ?? e), code: error.code },
    });
  }
});
