/**
 * `akd layout collect`: deletes the node versions of a store of versions that no reader
 * reaches any more (directory's version-collection.ts), epoch by epoch with progress on
 * stderr, resuming after the last epoch a run finished. It takes the writer lock, not the key.
 *
 * `akd layout migrate`: moves a SQLite or PostgreSQL store of tree-node records to the
 * versions layout (`NodeLayout`), in which an epoch appends its own node versions instead of
 * rewriting records spread over the whole store. It copies the records a chunk per
 * transaction with progress on stderr, resumes where a run that stopped left off, and
 * switches the store over in one last transaction. It holds the writer lock (stop the
 * publishing server first); readers keep serving from the records until the switch.
 */

import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { collectStoreVersions } from '@akd-ts/directory';
import { loadPostgresDriver, loadSqliteDriver } from '@akd-ts/server/drivers';
import { parseCount } from '../args.js';
import { UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { toJson } from '../output.js';
import { postgresTarget, storeUrl, type StoreOptions } from '../store.js';
import { withPublicStore } from './directory.js';

interface MigrateOptions extends StoreOptions {
  chunk?: string;
  vacuum: boolean;
  json?: boolean;
}

/** What a migration run did, whichever driver ran it. */
interface Migrated {
  already: boolean;
  resumed: boolean;
  restarted: boolean;
  /** Records (rows of the store's node table) copied. */
  records: number;
  /** Node versions written. */
  versions: number;
  /** Whether the file was vacuumed once switched (SQLite). */
  vacuumed: boolean;
}

/** Migrates the store at `url`, reporting each chunk through `progress`. */
async function migrate(
  url: string,
  chunk: number,
  vacuum: boolean,
  progress: (line: string) => void,
): Promise<Migrated> {
  if (url.startsWith('sqlite:')) {
    const path = url.slice('sqlite:'.length);
    if (path === '' || !existsSync(path)) {
      throw new UsageError(`--db: no store at ${JSON.stringify(path)} (check the path)`);
    }
    const { migrateNodeLayout } = await loadSqliteDriver();
    const r = await migrateNodeLayout(path, {
      chunkRows: chunk,
      vacuum,
      onProgress: ({ done, total }) => progress(`${done} of ${total} records copied`),
    });
    return { ...r, records: r.rows };
  }
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) {
    const { migrateNodeLayout } = await loadPostgresDriver();
    const { connection, schema } = postgresTarget(url);
    const r = await migrateNodeLayout(connection, {
      ...(schema === undefined ? {} : { schema }),
      chunkSize: chunk,
      onProgress: ({ labels, estimatedLabels }) =>
        progress(`${labels} of about ${estimatedLabels} records copied`),
    });
    // a dropped table's files go at once: nothing to give back
    return { ...r, records: r.labels, vacuumed: false };
  }
  throw new UsageError(
    `--db: ${JSON.stringify(url)} is not a sqlite: or postgres:// store (a memory: store ` +
      'takes its layout when created: akd init --node-layout versions)',
  );
}

/** Adds `akd layout migrate` and `akd layout collect` to `program`. */
export function addLayoutCommands(program: Command, io: CliIo): void {
  const layout = program.command('layout').description('how a store keeps its tree nodes');
  addCollectCommand(layout, io);
  const cmd = layout
    .command('migrate')
    .description('keep tree nodes as versions appended by epoch (once, resumable)')
    .option('--db <url>', 'the store: sqlite:<path> or postgres://... (default: AKD_DB)')
    .option('--chunk <n>', 'records copied per transaction (progress and resuming point)', '20000')
    .option('--no-vacuum', 'SQLite: leave the pages the records held free in the file')
    .option('--json', 'print the result as JSON');
  cmd.addHelpText(
    'after',
    '\nA store of records rewrites, at every epoch, records spread over its whole node table;\n' +
      'a store of versions appends what the epoch wrote. Run it once, with the writer stopped\n' +
      '(it holds the writer lock); readers keep serving until the last step switches the\n' +
      'store over. A run that stops resumes after the last chunk it copied. Back the store up\n' +
      'first: an older akd-ts cannot open the store once it is migrated. On SQLite it then\n' +
      'VACUUMs the file (room for a copy of it is needed): the pages the records held, left\n' +
      'free, would make the next epochs write about three times as much.\n\n' +
      'Example:\n  $ akd layout migrate --db sqlite:./akd.db\n',
  );
  cmd.action(async (opts: MigrateOptions) => {
    const chunk = parseCount(opts.chunk ?? '20000', '--chunk');
    const url = storeUrl(opts, io);
    const started = performance.now();
    const r = await migrate(url, chunk, opts.vacuum, (line) =>
      io.stderr.write(`layout: ${line}\n`),
    );
    const seconds = Number(((performance.now() - started) / 1000).toFixed(3));
    if (opts.json === true) {
      io.stdout.write(`${toJson({ store: url, layout: 'versions', ...r, seconds })}\n`);
    } else if (r.already) {
      io.stdout.write(`${url} keeps its tree nodes as versions already: nothing to do\n`);
    } else {
      const how = r.restarted
        ? ' (started over: a writer published since)'
        : r.resumed
          ? ' (resumed)'
          : '';
      io.stdout.write(
        `${url} now keeps its tree nodes as versions: ${r.records} records copied as ` +
          `${r.versions} versions in ${seconds} s${how}${r.vacuumed ? ', then vacuumed' : ''}\n`,
      );
    }
  });
}

/** `akd layout collect`. */
function addCollectCommand(layout: Command, io: CliIo): void {
  const cmd = layout
    .command('collect')
    .description('delete the node versions no reader reaches any more (resumable)')
    .option('--db <url>', 'the store: sqlite:<path> or postgres://... (default: AKD_DB)')
    .option('--json', 'print the result as JSON');
  cmd.addHelpText(
    'after',
    '\nA store of versions keeps every version of a node that a publish wrote; readers walk the\n' +
      'trees of the latest epoch and the one before it only. This deletes the versions that\n' +
      'those trees no longer reach (the nodes on the paths each epoch rewrote), epoch by\n' +
      'epoch, and resumes after the last epoch a run finished. It takes the writer lock (run it\n' +
      'between publishes, or with the writer stopped) and needs no VRF key. Each deleted version\n' +
      'rewrites the page it was on: run it now and then rather than after every epoch, so that\n' +
      'pages lose several versions at once. SQLite reuses a page once it is empty; VACUUM gives\n' +
      'the room inside pages back.\n\n' +
      'Example:\n  $ akd layout collect --db sqlite:./akd.db\n',
  );
  cmd.action(async (opts: StoreOptions & { json?: boolean }) => {
    const url = storeUrl(opts, io);
    await withPublicStore(opts, io, async (store) => {
      if (store.db.nodeLayout !== 'versions') {
        const message = `${url} keeps its tree nodes as records: nothing to collect`;
        if (opts.json === true) io.stdout.write(`${toJson({ store: url, layout: 'records' })}\n`);
        else io.stdout.write(`${message} (akd layout migrate moves it to versions)\n`);
        return;
      }
      const started = performance.now();
      const r = await collectStoreVersions(store.db, {
        onProgress: ({ epoch, through, deleted }) =>
          io.stderr.write(
            `layout: epoch ${epoch} of ${through} collected, ${deleted} versions deleted\n`,
          ),
      });
      const seconds = Number(((performance.now() - started) / 1000).toFixed(3));
      if (opts.json === true) {
        io.stdout.write(`${toJson({ store: url, layout: 'versions', ...r, seconds })}\n`);
      } else if (r.epochs === 0) {
        io.stdout.write(
          `${url}: nothing to collect (every epoch a reader may skip is collected)\n`,
        );
      } else {
        io.stdout.write(
          `${url}: epochs ${r.from} to ${r.through} collected, ${r.deleted} node versions ` +
            `deleted in ${seconds} s\n`,
        );
      }
    });
  });
}
