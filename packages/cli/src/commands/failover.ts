/**
 * `akd fence` and `akd promote`: the two akd steps of a PostgreSQL fail-over (the runbook is in
 * docs/operating.md). `fence` runs against the old primary and stops every writer there, now
 * and later; `promote` runs against the standby: it waits until the standby has applied that
 * fence (so it holds every epoch the old primary published), promotes it, and makes it
 * writable for the directory's writer.
 */

import type { Command } from 'commander';
import { AkdError } from '@akd-ts/core';
import type { PostgresDatabase, WriterFence } from '@akd-ts/storage-postgres';
import { UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { toJson } from '../output.js';
import { openDatabase, readSettings, storeUrl } from '../store.js';

/**
 * Opens the PostgreSQL store a URL names without creating or migrating anything (it may be a
 * standby), and checks that it holds a directory.
 */
async function openPostgres(url: string): Promise<PostgresDatabase> {
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new UsageError(
      '--db: fencing and promotion are for PostgreSQL stores (postgres://...); a SQLite store ' +
        'has one writer on one machine, held by its lock file',
    );
  }
  // never creates or migrates: the store may be a standby
  const db = (await openDatabase(url, { create: false })) as PostgresDatabase;
  try {
    if ((await readSettings(db)) === undefined) {
      throw new AkdError('DIRECTORY_READ_ONLY', `schema "${db.schema}" holds no directory`);
    }
  } catch (e) {
    await db.close();
    throw e;
  }
  return db;
}

/** The fence and the latest epoch, as printed. */
async function state(db: PostgresDatabase, fence: WriterFence) {
  const { latestEpoch } = await db.get({ kind: 'azks' });
  return {
    schema: db.schema,
    generation: fence.generation,
    fenced: fence.fenced,
    epoch: latestEpoch,
  };
}

function parseGeneration(text: string): bigint {
  if (!/^[0-9]{1,19}$/.test(text)) {
    throw new UsageError(`--fenced-generation: expected the number akd fence printed, got ${text}`);
  }
  return BigInt(text);
}

function parseTimeout(text: string): number {
  const seconds = /^[0-9]{1,6}$/.test(text) ? Number(text) : NaN;
  if (!(seconds >= 1))
    throw new UsageError(`--timeout: expected seconds (at least 1), got ${text}`);
  return seconds * 1000;
}

interface FenceOptions {
  db?: string;
  json?: boolean;
}

function addFence(program: Command, io: CliIo): void {
  const cmd = program
    .command('fence')
    .description('stop every writer of a PostgreSQL store, now and later (fail-over, step 1)')
    .option('--db <url>', 'the old primary: postgres://...?schema=<name> (default: AKD_DB)')
    .option('--json', 'print the result as one line of JSON');
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd fence --db postgres://akd@old-primary/akd\n\n' +
      "Bumps the store's writer generation and marks it fenced: the writer holding it fails its\n" +
      'next publish (a publish in flight commits first), and no writer may open it again. Pass\n' +
      'the generation it prints to akd promote on the standby. The whole runbook is in\n' +
      'docs/operating.md ("Fail-over").\n',
  );
  cmd.action(async (opts: FenceOptions) => {
    const db = await openPostgres(storeUrl(opts, io));
    try {
      const result = await state(db, await db.fence());
      if (opts.json === true) io.stdout.write(`${toJson(result)}\n`);
      else {
        io.stdout.write(
          `fenced schema "${result.schema}" at generation ${result.generation}, epoch ` +
            `${result.epoch}: no writer may publish to this store any more\n` +
            `next: akd promote --db <standby> --fenced-generation ${result.generation}\n`,
        );
      }
    } finally {
      await db.close();
    }
  });
}

interface PromoteOptions {
  db?: string;
  fencedGeneration?: string;
  fence: boolean;
  timeout: string;
  json?: boolean;
}

function addPromote(program: Command, io: CliIo): void {
  const cmd = program
    .command('promote')
    .description(
      'make a standby the writable copy of a PostgreSQL store (fail-over, step 2): wait for the fence, promote, unfence',
    )
    .option('--db <url>', 'the standby: postgres://...?schema=<name> (default: AKD_DB)')
    .option('--fenced-generation <n>', 'the generation akd fence printed on the old primary')
    .option('--no-fence', 'the old primary is gone for good and was not fenced (see the help)')
    .option('--timeout <seconds>', 'how long to wait for the fence and the promotion', '60')
    .option('--json', 'print the result as one line of JSON');
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd promote --db postgres://akd@standby/akd --fenced-generation 4\n\n' +
      'Waits until the standby has applied the fence (then it holds every epoch the old primary\n' +
      'published), promotes it with pg_promote() (or, if the role may not, tells you to run\n' +
      'pg_ctl promote), and lifts the fence so that a writer may open it. --no-fence skips the\n' +
      'wait: only when the old primary can never come back, since epochs it published after\n' +
      "the standby's last applied change are then lost, and it must never be written again.\n",
  );
  cmd.action(async (opts: PromoteOptions) => {
    if ((opts.fencedGeneration === undefined) === opts.fence) {
      throw new UsageError(
        opts.fence
          ? 'give --fenced-generation <n> (from akd fence on the old primary), or --no-fence'
          : '--fenced-generation and --no-fence exclude each other',
      );
    }
    const generation =
      opts.fencedGeneration === undefined ? undefined : parseGeneration(opts.fencedGeneration);
    const timeoutMs = parseTimeout(opts.timeout);
    const db = await openPostgres(storeUrl(opts, io));
    try {
      const { fence, promotedServer } = await db.promote({
        timeoutMs,
        ...(generation === undefined ? {} : { fencedGeneration: generation }),
      });
      const result = { ...(await state(db, fence)), promotedServer };
      if (opts.json === true) io.stdout.write(`${toJson(result)}\n`);
      else {
        io.stdout.write(
          `${promotedServer ? 'promoted the standby' : 'the server was already a primary'}; ` +
            `schema "${result.schema}" is writable at generation ${result.generation}, epoch ` +
            `${result.epoch}\nnext: point the writer (akd publish, akd serve with a publish ` +
            `token) and the readers at this server\n`,
        );
      }
    } finally {
      await db.close();
    }
  });
}

/** Adds `akd fence` and `akd promote` to `program`. */
export function addFailoverCommands(program: Command, io: CliIo): void {
  addFence(program, io);
  addPromote(program, io);
}
