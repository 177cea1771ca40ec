/**
 * The files of a restore: the backup is copied to a staging file beside the new store and
 * checked there (checking opens it read-write, which a user's backup must not be), and only a
 * copy that passes gets the store's name, by a hard link that fails rather than replace a
 * file, so a refused restore leaves nothing at the store's path and never overwrites one.
 */

import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, link as hardLink, rm } from 'node:fs/promises';
import { UsageError } from '../errors.js';

/** Why a restore refuses an existing path. */
export const NEVER_OVERWRITES = 'a restore never overwrites a store; move it away first';

/** A file beside `path`, named for the restore in progress. */
export function stagingPath(path: string): string {
  return `${path}.restoring-${randomBytes(4).toString('hex')}`;
}

/** Removes the SQLite store at `path` with its WAL and shared-memory files, if there. */
export async function removeStore(path: string): Promise<void> {
  await Promise.all(['', '-wal', '-shm'].map((s) => rm(`${path}${s}`, { force: true })));
}

/** The message of a `--db` path that cannot be created. */
export function cannotCreate(path: string, e: unknown): UsageError {
  return new UsageError(`--db: cannot create ${JSON.stringify(path)}: ${(e as Error).message}`, {
    cause: e,
  });
}

/**
 * Gives the checked file `staged` the name `path`, which must not exist: a hard link, or a
 * copy on a file system without them (both refuse an existing file). `staged` stays; the
 * caller removes it.
 * @throws UsageError when `path` exists or cannot be created
 */
export async function placeNewFile(
  staged: string,
  path: string,
  link: (from: string, to: string) => Promise<void> = hardLink,
): Promise<void> {
  try {
    await link(staged, path);
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new UsageError(`--db: ${JSON.stringify(path)} exists: ${NEVER_OVERWRITES}`, {
        cause: e,
      });
    }
  }
  try {
    await copyFile(staged, path, constants.COPYFILE_EXCL);
  } catch (e) {
    throw cannotCreate(path, e);
  }
}
