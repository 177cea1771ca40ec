/**
 * The check `akd backup` runs on the copy it wrote and `akd restore` on the backup before it
 * becomes a store: SQLite's integrity check of the whole file, then the directory's own
 * consistency (the AZKS record's latest epoch against the root the tree holds, the root's
 * hash against its children, the stored audit blobs chaining from root to root, the node
 * count and newest epochs of a scan of every table), and with `--verify full` every node of
 * the tree. A copy that fails is named with what failed, and is never called good.
 */

import { AkdError, toHex } from '@akd-ts/core';
import { checkStoredDirectory } from '@akd-ts/directory';
import { readSettings, settingsConfiguration } from '../store.js';
import { loadSqliteDriver } from '@akd-ts/server/drivers';

/** How much `--verify` checks. */
export const VERIFY_LEVELS = ['standard', 'full'] as const;
export type VerifyLevel = (typeof VERIFY_LEVELS)[number];

/** What a checked copy holds: the directory's epoch, root hash and configuration. */
export interface CheckedStore {
  epoch: bigint;
  rootHash: string;
  configuration: string;
  publicKey: string;
}

/** Problems SQLite reports beyond the first are counted, not listed: one line is the rule. */
function integrityError(problems: string[]): AkdError {
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  return new AkdError('STORAGE_CORRUPT', `integrity_check: ${problems[0]}${more}`);
}

/**
 * Opens the SQLite store at `path` (never creating one) and checks it as `level` says.
 * @throws AkdError `STORAGE_CORRUPT` naming what failed ("integrity_check: ...", "azks latest
 * epoch 17 but ..."), `DIRECTORY_READ_ONLY` when it holds no directory, or a storage error.
 */
export async function checkStoreFile(path: string, level: VerifyLevel): Promise<CheckedStore> {
  const { SqliteDatabase } = await loadSqliteDriver();
  const db = await SqliteDatabase.open(path, { create: false });
  try {
    const problems = await db.checkIntegrity();
    if (problems.length > 0) throw integrityError(problems);
    const settings = await readSettings(db);
    if (settings === undefined) {
      throw new AkdError('DIRECTORY_READ_ONLY', `sqlite:${path} holds no directory`);
    }
    const report = await checkStoredDirectory(settingsConfiguration(settings), db, {
      totals: await db.recordTotals(),
      full: level === 'full',
    });
    return {
      epoch: report.latestEpoch,
      rootHash: toHex(report.rootHash),
      configuration: settings.configuration,
      publicKey: settings.publicKey,
    };
  } finally {
    await db.close();
  }
}
