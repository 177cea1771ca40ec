/**
 * `akd vrf migrate`: moves the VRF proofs a store kept one row per proof (SQLite schema before
 * version 10, PostgreSQL before 7) to rows by label, a label's proofs of one write in one
 * row, which takes about half the room on PostgreSQL (bench/RESULTS.md). Readers read both layouts, so the move only gives the room back;
 * it needs no key, holds the writer lock, reports progress on stderr and resumes where a run
 * that stopped left off.
 */

import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { loadPostgresDriver, loadSqliteDriver } from '@akd-ts/server/drivers';
import { parseCount } from '../args.js';
import { UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { toJson } from '../output.js';
import { postgresTarget, storeUrl, type StoreOptions } from '../store.js';

interface MigrateOptions extends StoreOptions {
  chunk?: string;
  vacuum: boolean;
  json?: boolean;
}

/** What a run did, whichever driver ran it. */
interface Moved {
  moved: number;
  total: number;
  labels: number;
  rows: number;
  /** Whether the file was vacuumed once the proofs moved (SQLite). */
  vacuumed: boolean;
}

/** Moves the proofs of the store at `url`, reporting each chunk through `progress`. */
async function move(
  url: string,
  chunkLabels: number,
  vacuum: boolean,
  progress: (p: { moved: number; total: number }) => void,
): Promise<Moved> {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '' || !existsSync(path)) {
      throw new UsageError(`--db: no store at ${JSON.stringify(path)} (check the path)`);
    }
    const { migrateVrfProofRows } = await loadSqliteDriver();
    return migrateVrfProofRows(path, { chunkLabels, vacuum, onProgress: progress });
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { migrateVrfProofRows } = await loadPostgresDriver();
    const { connection, schema } = postgresTarget(url);
    const r = await migrateVrfProofRows(connection, {
      ...(schema === undefined ? {} : { schema }),
      chunkLabels,
      onProgress: progress,
    });
    // the older tables' rows are dead tuples for autovacuum (their indexes keep their size
    // until a REINDEX: the driver's README)
    return { ...r, vacuumed: false };
  }
  throw new UsageError(
    `--db: ${JSON.stringify(url)} is not a sqlite: or postgres:// store (a memory: store ` +
      'keeps its proofs as it always did)',
  );
}

/** Adds `akd vrf migrate` to the `vrf` command. */
export function addVrfMigrateCommand(vrf: Command, io: CliIo): void {
  const cmd = vrf
    .command('migrate')
    .description('keep stored VRF proofs as rows by label (once, resumable; no key needed)')
    .option('--db <url>', 'the store: sqlite:<path> or postgres://... (default: AKD_DB)')
    .option('--chunk <n>', 'labels moved per transaction (progress and resuming point)', '5000')
    .option('--no-vacuum', 'SQLite: leave the pages the older rows held free in the file')
    .option('--json', 'print the result as JSON');
  cmd.addHelpText(
    'after',
    '\nA store written before SQLite schema 10 (PostgreSQL 7) keeps a row per stored VRF proof;\n' +
      'publishes since keep a row per label and epoch, and reads take both. This moves the\n' +
      'older rows, a chunk of labels per transaction, and gives their room back. Run it with\n' +
      'the writer stopped (it holds the writer lock); readers keep serving throughout. A run\n' +
      'that stops resumes by running it again. On SQLite it then VACUUMs the file (room for a\n' +
      "copy of it is needed), giving the older rows' pages back.\n\n" +
      'Example:\n  $ akd vrf migrate --db sqlite:./akd.db\n',
  );
  cmd.action(async (opts: MigrateOptions) => {
    const chunk = parseCount(opts.chunk ?? '5000', '--chunk');
    const url = storeUrl(opts, io);
    const started = performance.now();
    const r = await move(url, chunk, opts.vacuum, ({ moved, total }) =>
      io.stderr.write(`vrf migrate: ${moved} of ${total} proofs moved\n`),
    );
    const seconds = Number(((performance.now() - started) / 1000).toFixed(3));
    if (opts.json === true) {
      io.stdout.write(`${toJson({ store: url, ...r, seconds })}\n`);
    } else if (r.total === 0) {
      io.stdout.write(`${url} keeps its VRF proofs as rows by label already: nothing to do\n`);
    } else {
      io.stdout.write(
        `${url} now keeps its VRF proofs as rows by label: ${r.moved} proofs of ${r.labels} ` +
          `labels moved to ${r.rows} rows in ${seconds} s${r.vacuumed ? ', then vacuumed' : ''}\n`,
      );
    }
  });
}
