/**
 * `akd backup` and `akd restore`: a consistent copy of a SQLite store, taken while its writer
 * publishes (SQLite's online backup: one committed epoch, whole), and putting such a copy back
 * as a new store. Neither calls a copy good before it passes the check of store-check.ts
 * (SQLite's integrity check and the directory's own consistency): a backup that fails is
 * removed, a restore that fails writes nothing. Neither ever overwrites a file. PostgreSQL
 * stores are backed up with PostgreSQL's own tools (pg_dump, pg_basebackup):
 * docs/operating.md says how.
 */

import { constants } from 'node:fs';
import { copyFile, stat } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { AkdError, isAkdError } from '@akd-ts/core';
import type { SqliteDatabase } from '@akd-ts/storage-sqlite';
import { UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { toJson } from '../output.js';
import { readSettings, storeUrl } from '../store.js';
import {
  checkStoreFile,
  VERIFY_LEVELS,
  type CheckedStore,
  type VerifyLevel,
} from './store-check.js';
import {
  NEVER_OVERWRITES,
  cannotCreate,
  placeNewFile,
  removeStore,
  stagingPath,
} from './store-files.js';
import { loadSqliteDriver } from '@akd-ts/server/drivers';

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

/**
 * Opens the SQLite store at `path`, which must hold a directory, and runs `then` on it.
 * @throws AkdError `DIRECTORY_READ_ONLY` when it holds no directory
 */
async function withDirectory(path: string, then: (db: SqliteDatabase) => Promise<void>) {
  const { SqliteDatabase } = await loadSqliteDriver();
  const db = await SqliteDatabase.open(path, { create: false });
  try {
    if ((await readSettings(db)) === undefined) {
      throw new AkdError('DIRECTORY_READ_ONLY', `sqlite:${path} holds no directory`);
    }
    await then(db);
  } finally {
    await db.close();
  }
}

/**
 * `e`, an error of checking a copy, with `context` said first; AkdErrors keep their code.
 * `staged`, where the check ran on a private copy of a file, is replaced by that file's name.
 */
function refusal(e: unknown, context: string, staged?: [string, string]): unknown {
  if (!isAkdError(e)) return e;
  const message = staged === undefined ? e.message : e.message.replaceAll(...staged);
  return new AkdError(e.code, `${context}: ${message}`, { cause: e });
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

/** `--verify`, the same for both commands. */
function verifyOption(): Option {
  return new Option('--verify <level>', 'how much of the copy to check (full: every tree node too)')
    .choices(VERIFY_LEVELS)
    .default('standard');
}

const CHECKS =
  "What is checked: SQLite's integrity_check of the whole file, then the directory's own\n" +
  "consistency: the azks record's latest epoch is the epoch its tree's root was last written\n" +
  'in, the root hash is the hash of its children, the stored audit blobs chain from root to\n' +
  "root and end at the tree's root, and azks counts every stored node and is no older than\n" +
  'any node, value state or blob. --verify full also reads every tree node and checks its\n' +
  'hash, epochs and children: minutes for millions of labels.\n';

interface BackupOptions {
  db?: string;
  out: string;
  json?: boolean;
  verify: VerifyLevel;
}

function addBackup(program: Command, io: CliIo): void {
  const cmd = program
    .command('backup')
    .description('copy a SQLite store consistently, even while its writer publishes')
    .option('--db <url>', 'the store, sqlite:<path> (default: AKD_DB, else sqlite:./akd.db)')
    .requiredOption('--out <file>', 'the backup file to create (never overwritten)')
    .addOption(verifyOption())
    .option('--json', 'print the result as one line of JSON');
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd backup --db sqlite:./akd.db --out /backups/akd-$(date +%F).db\n\n' +
      "The copy is one committed epoch, whole (SQLite's online backup), so it can be taken while\n" +
      'akd publish or a writing akd serve runs. It holds the data, not the VRF key: back the key\n' +
      'file up separately. Restore with akd restore. PostgreSQL stores: use pg_dump or\n' +
      'pg_basebackup (docs/operating.md).\n\n' +
      'The copy is checked before it is reported good; a copy that fails is removed, and the\n' +
      'error names what failed (the store itself may be damaged then).\n\n' +
      CHECKS,
  );
  cmd.action(async (opts: BackupOptions) => {
    const url = storeUrl(opts, io);
    const path = sqlitePath(url, '--db');
    await existingFile(path, '--db');
    await absent(opts.out, '--out', 'a backup never overwrites a file');
    // there must be a directory to back up; the copy is then checked and described
    await withDirectory(path, (db) => db.backup(opts.out));
    let summary: CheckedStore;
    try {
      summary = await checkStoreFile(opts.out, opts.verify);
    } catch (e) {
      await removeStore(opts.out);
      throw refusal(e, `the backup fails its check and was removed (is ${url} damaged?)`);
    }
    report(io, opts.json, { verb: 'backed up', from: url, to: opts.out, ...summary });
  });
}

interface RestoreOptions {
  db?: string;
  from: string;
  json?: boolean;
  verify: VerifyLevel;
}

function addRestore(program: Command, io: CliIo): void {
  const cmd = program
    .command('restore')
    .description('make a new SQLite store from a backup that akd backup wrote')
    .requiredOption('--from <file>', 'the backup file')
    .requiredOption('--db <url>', 'the new store, sqlite:<path>; the path must not exist')
    .addOption(verifyOption());
  cmd.option('--json', 'print the result as one line of JSON');
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd restore --from /backups/akd-2026-12-01.db --db sqlite:./akd.db\n\n' +
      'A restore never overwrites a store: move the old one away first. The restored store is\n' +
      "the directory as of the backup's epoch. If the directory published later epochs that\n" +
      'clients or auditors saw, publishing from the restored store forks it: see\n' +
      'docs/operating.md ("Backups") before publishing.\n\n' +
      'The backup is checked (on a copy beside the new store; the backup itself is only read)\n' +
      'before the store is put in place: a backup that fails is refused with what failed, and\n' +
      'nothing is written.\n\n' +
      CHECKS,
  );
  cmd.action(async (opts: RestoreOptions) => {
    const path = sqlitePath(opts.db!, '--db');
    await existingFile(opts.from, '--from');
    await absent(path, '--db', NEVER_OVERWRITES);
    const staged = stagingPath(path);
    let summary: CheckedStore;
    try {
      try {
        await copyFile(opts.from, staged, constants.COPYFILE_EXCL);
      } catch (e) {
        throw cannotCreate(path, e);
      }
      try {
        summary = await checkStoreFile(staged, opts.verify);
      } catch (e) {
        // the check ran on the staged copy: its errors name the backup
        throw refusal(e, `restore refused, nothing was written: ${opts.from}`, [staged, opts.from]);
      }
      await placeNewFile(staged, path);
    } finally {
      await removeStore(staged);
    }
    report(io, opts.json, { verb: 'restored', from: opts.from, to: opts.db!, ...summary });
  });
}

/** Adds `akd backup` and `akd restore` to `program`. */
export function addBackupCommands(program: Command, io: CliIo): void {
  addBackup(program, io);
  addRestore(program, io);
}
