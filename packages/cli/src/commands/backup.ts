/**
 * `akd backup` and `akd restore`: a consistent copy of a SQLite store, taken while its writer
 * publishes (SQLite's online backup: one committed epoch, whole), and putting such a copy back
 * as a new store. Both check that what they copy holds a directory, and neither ever
 * overwrites a file. PostgreSQL stores are backed up with PostgreSQL's own tools (pg_dump,
 * pg_basebackup): docs/operating.md says how.
 */

import { constants } from 'node:fs';
import { copyFile, rm, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { AkdError, toHex } from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { Azks } from '@akd-ts/directory';
import type { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { toJson } from '../output.js';
import { readSettings, settingsConfiguration, storeUrl } from '../store.js';

const POSTGRES_HINT =
  'back up a PostgreSQL store with pg_dump or pg_basebackup (docs/operating.md, "Backups")';

/** The file of a `sqlite:` store URL; other stores are refused, naming what to use. */
function sqlitePath(url: string, option: string): string {
  if (/^postgres(ql)?:\/\//.test(url)) throw new UsageError(`${option}: ${POSTGRES_HINT}`);
  if (!url.startsWith('sqlite:') || url.length === 'sqlite:'.length) {
    throw new UsageError(`${option}: expected a SQLite store, sqlite:<path>`);
  }
  return url.slice('sqlite:'.length);
}

/** Refuses anything but an existing, non-empty regular file (never creates one). */
async function existingFile(path: string, option: string): Promise<void> {
  const info = await stat(path).catch((e: NodeJS.ErrnoException) => {
    throw new UsageError(`${option}: no store at ${JSON.stringify(path)} (${e.code})`, {
      cause: e,
    });
  });
  if (!info.isFile()) throw new UsageError(`${option}: ${JSON.stringify(path)} is not a file`);
  if (info.size === 0) {
    throw new UsageError(`${option}: ${JSON.stringify(path)} is empty, not an akd store`);
  }
}

/** Refuses a path where a file (or a store's WAL) already is. */
async function absent(path: string, option: string, why: string): Promise<void> {
  for (const p of [path, `${path}-wal`]) {
    if (
      await stat(p).then(
        () => true,
        () => false,
      )
    ) {
      throw new UsageError(`${option}: ${JSON.stringify(p)} exists: ${why}`);
    }
  }
}

/** What a copy holds: the directory's epoch, root hash and configuration. */
interface Summary {
  epoch: bigint;
  rootHash: string;
  configuration: string;
  publicKey: string;
}

/**
 * Opens the SQLite store at `path`, describes the directory in it, and runs `then` on it.
 * @throws AkdError `DIRECTORY_READ_ONLY` when it holds no directory
 */
async function withStore(
  path: string,
  then: (db: SqliteDatabase) => Promise<void> = async () => {},
): Promise<Summary> {
  const { SqliteDatabase } = await import('@akd-ts/storage-sqlite');
  const db = await SqliteDatabase.open(path, { create: false });
  try {
    const settings = await readSettings(db);
    if (settings === undefined) {
      throw new AkdError('DIRECTORY_READ_ONLY', `sqlite:${path} holds no directory`);
    }
    const storage = new StorageManager(db, { cache: false });
    const { latestEpoch } = await storage.get({ kind: 'azks' });
    const hash = await new Azks(settingsConfiguration(settings)).rootHash(storage, latestEpoch);
    await then(db);
    return {
      epoch: latestEpoch,
      rootHash: toHex(hash),
      configuration: settings.configuration,
      publicKey: settings.publicKey,
    };
  } finally {
    await db.close();
  }
}

function report(io: CliIo, json: boolean | undefined, data: Record<string, string | bigint>) {
  const { verb, ...rest } = data;
  if (json === true) io.stdout.write(`${toJson(rest)}\n`);
  else {
    io.stdout.write(
      `${String(verb)} ${String(rest['from'])} to ${String(rest['to'])}\n` +
        `epoch: ${rest['epoch']}\nroot hash: ${String(rest['rootHash'])}\n` +
        `configuration: ${String(rest['configuration'])}\n`,
    );
  }
}

interface BackupOptions {
  db?: string;
  out: string;
  json?: boolean;
}

function addBackup(program: Command, io: CliIo): void {
  const cmd = program
    .command('backup')
    .description('copy a SQLite store consistently, even while its writer publishes')
    .option('--db <url>', 'the store, sqlite:<path> (default: AKD_DB, else sqlite:./akd.db)')
    .requiredOption('--out <file>', 'the backup file to create (never overwritten)')
    .option('--json', 'print the result as one line of JSON');
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd backup --db sqlite:./akd.db --out /backups/akd-$(date +%F).db\n\n' +
      "The copy is one committed epoch, whole (SQLite's online backup), so it can be taken while\n" +
      'akd publish or a writing akd serve runs. It holds the data, not the VRF key: back the key\n' +
      'file up separately. Restore with akd restore. PostgreSQL stores: use pg_dump or\n' +
      'pg_basebackup (docs/operating.md).\n',
  );
  cmd.action(async (opts: BackupOptions) => {
    const url = storeUrl(opts, io);
    const path = sqlitePath(url, '--db');
    await existingFile(path, '--db');
    await absent(opts.out, '--out', 'a backup never overwrites a file');
    // there must be a directory to back up; the copy is then described as it was taken
    await withStore(path, (db) => db.backup(opts.out));
    const summary = await withStore(opts.out);
    report(io, opts.json, { verb: 'backed up', from: url, to: opts.out, ...summary });
  });
}

interface RestoreOptions {
  db?: string;
  from: string;
  json?: boolean;
}

function addRestore(program: Command, io: CliIo): void {
  const cmd = program
    .command('restore')
    .description('make a new SQLite store from a backup that akd backup wrote')
    .requiredOption('--from <file>', 'the backup file')
    .requiredOption('--db <url>', 'the new store, sqlite:<path>; the path must not exist');
  cmd.option('--json', 'print the result as one line of JSON');
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd restore --from /backups/akd-2026-12-01.db --db sqlite:./akd.db\n\n' +
      'A restore never overwrites a store: move the old one away first. The restored store is\n' +
      "the directory as of the backup's epoch. If the directory published later epochs that\n" +
      'clients or auditors saw, publishing from the restored store forks it: see\n' +
      'docs/operating.md ("Backups") before publishing.\n',
  );
  cmd.action(async (opts: RestoreOptions) => {
    const path = sqlitePath(opts.db!, '--db');
    await existingFile(opts.from, '--from');
    await absent(path, '--db', 'a restore never overwrites a store; move it away first');
    try {
      await copyFile(opts.from, path, constants.COPYFILE_EXCL);
    } catch (e) {
      throw new UsageError(`--db: cannot create ${JSON.stringify(path)}: ${(e as Error).message}`, {
        cause: e,
      });
    }
    let summary: Summary;
    try {
      summary = await withStore(path);
    } catch (e) {
      // what was copied is no directory: leave nothing behind
      await Promise.all(['', '-wal', '-shm'].map((s) => rm(`${path}${s}`, { force: true })));
      throw e;
    }
    report(io, opts.json, { verb: 'restored', from: opts.from, to: opts.db!, ...summary });
  });
}

/** Adds `akd backup` and `akd restore` to `program`. */
export function addBackupCommands(program: Command, io: CliIo): void {
  addBackup(program, io);
  addRestore(program, io);
}
