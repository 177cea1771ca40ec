/**
 * Moving the VRF proofs a store kept before schema version 10 (one row of vrf_proofs per
 * proof, keyed `freshness || be64(version) || label`, and vrf_nonces) to vrf_proof_rows, a
 * label's proofs in one row (schema.sql). Readers read both layouts until then, so the move
 * only gives the space back: 731 B of proofs per label of a 10M-label store become about
 * 550 B (bench/RESULTS.md).
 *
 * A label at a time, a chunk of labels per transaction: its rows are read, written as rows of
 * its own with seq -1, -2, ... (older than every row a write appended, whose seq is at least
 * 0), and deleted, in one transaction. What has moved is gone from the old tables, so a run
 * stopped anywhere resumes by running again. Labels are found in order through an index of
 * the old table by label (a label's proofs are spread over its whole key range), built by the
 * first run and dropped by the one that empties the table.
 */

import { encodeVrfProofRows } from '@akd-ts/storage';
import { StatementCache, type SqliteClient, type SqliteStatement } from './client.js';
import { decodeVrfProofRow, type Row } from './codec.js';
import {
  chunkSize,
  jobTransaction,
  openStoreForJob,
  vacuumStore,
  type StoreJobOptions,
} from './store-job.js';

/** How far a move has come. */
export interface VrfProofMigrationProgress {
  /** Rows of vrf_proofs moved by this run so far. */
  moved: number;
  /** Rows of vrf_proofs when this run began. */
  total: number;
  /** Labels whose proofs this run moved so far. */
  labels: number;
}

export interface VrfProofMigrationOptions extends StoreJobOptions {
  /** Called once before the first chunk and after each commits; an error it throws stops the run. */
  onProgress?: (progress: VrfProofMigrationProgress) => void;
  /** Labels a transaction moves, 1-1,000,000 (default 5,000). */
  chunkLabels?: number;
  /**
   * Whether to `VACUUM` the store once a run moved proofs (default true). The older tables'
   * pages stay free in the file otherwise: a 1M-label store's file grew from 871 to 1,055 MB
   * over the move, 324 MB of it free pages, which later epochs would fill at random places.
   * The VACUUM rewrites the file (room for a copy of it is needed) under the writer lock.
   */
  vacuum?: boolean;
}

/** What a run did. */
export interface VrfProofMigrationResult extends VrfProofMigrationProgress {
  /** Rows of vrf_proof_rows this run wrote. */
  rows: number;
  /** Whether the store was vacuumed once the proofs moved (`VrfProofMigrationOptions.vacuum`). */
  vacuumed: boolean;
}

const INDEX = 'vrf_proofs_by_label';
const LABEL = 'substr(key, 10)';

/**
 * Moves the store's VRF proofs of the layout before schema version 10 to vrf_proof_rows (see
 * the module doc), under the writer lock (stop the writer first; readers may stay).
 * @throws AkdError `STORAGE_LOCKED` while a writer holds the store, `STORAGE_CONNECTION` for a
 * missing file, `STORAGE_CORRUPT` naming a row that does not decode (the labels before it stay
 * moved), `STORAGE_SCHEMA` as opening the store does
 *
 * @example
 * ```ts
 * await migrateVrfProofRows('./akd.db', {
 *   onProgress: ({ moved, total }) => console.log(`${moved} / ${total}`),
 * });
 * ```
 */
export async function migrateVrfProofRows(
  path: string,
  options: VrfProofMigrationOptions = {},
): Promise<VrfProofMigrationResult> {
  const chunkLabels = chunkSize('chunkLabels', options.chunkLabels, 5_000);
  const { client, db } = openStoreForJob(path, options);
  try {
    const lock = await db.acquireWriterLock();
    try {
      const result = new Move(client, path, chunkLabels, options.onProgress).run();
      const vacuumed = (options.vacuum ?? true) && result.moved > 0;
      if (vacuumed) vacuumStore(client, path, 'vacuum the store once its VRF proofs moved');
      return { ...result, vacuumed };
    } finally {
      await lock.release();
    }
  } finally {
    await db.close();
  }
}

class Move {
  private readonly statements: StatementCache;

  constructor(
    private readonly client: SqliteClient,
    private readonly path: string,
    private readonly chunkLabels: number,
    private readonly onProgress: ((progress: VrfProofMigrationProgress) => void) | undefined,
  ) {
    this.statements = new StatementCache(client);
  }

  private stmt(text: string): SqliteStatement {
    return this.statements.get(text);
  }

  run(): Omit<VrfProofMigrationResult, 'vacuumed'> {
    const total = jobTransaction(this.client, this.path, 'count the VRF proofs to move', () => {
      const n = this.stmt('SELECT count(*) FROM vrf_proofs').get() as [bigint];
      if (n[0] > 0n)
        this.client.exec(`CREATE INDEX IF NOT EXISTS ${INDEX} ON vrf_proofs (${LABEL})`);
      return Number(n[0]);
    });
    const result = { moved: 0, total, labels: 0, rows: 0 };
    this.onProgress?.({ moved: 0, total, labels: 0 });
    for (;;) {
      const chunk = jobTransaction(
        this.client,
        this.path,
        `move VRF proofs after ${result.moved} rows`,
        () => this.moveChunk(),
      );
      if (chunk.labels === 0) break;
      result.moved += chunk.moved;
      result.labels += chunk.labels;
      result.rows += chunk.rows;
      this.onProgress?.({ moved: result.moved, total, labels: result.labels });
    }
    jobTransaction(this.client, this.path, 'finish moving VRF proofs', () => {
      // a nonce whose proof row is gone has nothing to belong to (the driver never wrote one)
      this.client.exec(`DELETE FROM vrf_nonces; DROP INDEX IF EXISTS ${INDEX}`);
    });
    return result;
  }

  /** Moves the next `chunkLabels` labels' proofs (module doc). */
  private moveChunk(): { moved: number; labels: number; rows: number } {
    const labels = this.stmt(
      `SELECT DISTINCT ${LABEL} FROM vrf_proofs ORDER BY ${LABEL} LIMIT ?`,
    ).all(this.chunkLabels) as Row[];
    const out = { moved: 0, labels: labels.length, rows: 0 };
    const select = this.stmt(
      'SELECT p.key, p.value, n.nonce FROM vrf_proofs AS p ' +
        `LEFT JOIN vrf_nonces AS n ON n.key = p.key WHERE ${LABEL.replace('key', 'p.key')} = ?`,
    );
    const insert = this.stmt('INSERT INTO vrf_proof_rows (label, seq, entries) VALUES (?, ?, ?)');
    const dropProofs = this.stmt(`DELETE FROM vrf_proofs WHERE ${LABEL} = ?`);
    const dropNonce = this.stmt('DELETE FROM vrf_nonces WHERE key = ?');
    // key is a STRICT BLOB column: its substr is a blob
    for (const [label] of labels as [Uint8Array][]) {
      const found = select.all(label) as Row[];
      const records = found.map((row) => decodeVrfProofRow(row));
      const rows = encodeVrfProofRows(records);
      rows.forEach((row, i) => insert.run(row.label, -1 - i, row.entries));
      for (const row of found) if (row[2] !== null) dropNonce.run(row[0]);
      dropProofs.run(label);
      out.moved += found.length;
      out.rows += rows.length;
    }
    return out;
  }
}
