/**
 * Stores as older releases left them: a store of this driver's version with the tables and
 * columns of later versions taken away, its version row set back.
 */

import { SCHEMA_VERSION } from '@akd-ts/storage-postgres';
import { sql } from './postgres.js';

/** What each version added to the one before, undone (`s` is the quoted schema). */
const UNDO: Record<number, (s: string) => string> = {
  2: (s) => `DROP TABLE ${s}.audit_blobs`,
  3: (s) => `DROP TABLE ${s}.vrf_proofs`,
  4: (s) =>
    `ALTER TABLE ${s}.nodes DROP COLUMN left_epoch, DROP COLUMN right_epoch, ` +
    `DROP COLUMN p_left_epoch, DROP COLUMN p_right_epoch`,
  5: (s) =>
    `DROP TABLE ${s}.node_versions; ALTER TABLE ${s}.schema_version DROP COLUMN node_layout, ` +
    `DROP COLUMN layout_copied, DROP COLUMN layout_copied_epoch`,
  6: (s) => `DROP TABLE ${s}.vrf_nonces`,
  7: (s) => `DROP TABLE ${s}.vrf_proof_rows; DROP SEQUENCE ${s}.vrf_proof_rows_seq`,
};

/** Turns a store of this driver's version into one an older release wrote: `older`'s tables. */
export async function downgrade(schema: string, older: number): Promise<void> {
  for (let v = SCHEMA_VERSION; v > older; v--) await sql(UNDO[v]!(`"${schema}"`));
  await sql(`UPDATE "${schema}".schema_version SET version = ${older}`);
}
