/**
 * `akd vrf backfill`: the one-off job that gives a store written before publishes stored VRF
 * proofs the proofs of every version it holds, so that servers without the key can serve
 * its lookups and histories. It runs with the key (on the writer's host), takes the writer
 * lock, walks the labels in batches with progress on stderr, and resumes where a run that
 * stopped left off.
 */

import type { Command } from 'commander';
import { toHex } from '@akd-ts/core';
import { parseCount } from '../args.js';
import type { CliIo } from '../io.js';
import { toJson } from '../output.js';
import { SECRET_FOR, type StoreOptions } from '../store.js';
import { addStoreOptions, openWriter, vrfThreads, withStore } from './directory.js';
import { addVrfMigrateCommand } from './vrf-migrate.js';

interface BackfillOptions extends StoreOptions {
  batch?: string;
  vrfThreads?: string;
  json?: boolean;
}

/** Adds `akd vrf backfill` and `akd vrf migrate` to `program`. */
export function addVrfCommands(program: Command, io: CliIo): void {
  const vrf = program.command('vrf').description('VRF proofs stored for servers without the key');
  addVrfMigrateCommand(vrf, io);
  const cmd = vrf
    .command('backfill')
    .description('store the VRF proofs of every version a store already holds (once, resumable)')
    .option('--batch <n>', 'labels per batch (progress and resuming point)', '1000')
    .option('--vrf-threads <n>', 'worker threads for the VRF proofs (default: all cores)');
  addStoreOptions(cmd, SECRET_FOR.backfill);
  cmd.addHelpText(
    'after',
    "\nRun it once on the writer's host for a store written by an akd-ts that did not store VRF\n" +
      'proofs; publishes store them since. It holds the writer lock (stop the publishing server\n' +
      'first). A run that stops resumes after the last batch done; the store is then marked\n' +
      'complete, and servers without the key stop warning at start.\n\n' +
      'Example:\n  $ akd vrf backfill --db sqlite:./akd.db --key-file ./akd.key\n',
  );
  cmd.action(async (opts: BackfillOptions) => {
    const batch = parseCount(opts.batch ?? '1000', '--batch');
    const threads = vrfThreads(opts.vrfThreads);
    await withStore(
      opts,
      io,
      async (store) => {
        const started = performance.now();
        const dir = await openWriter(store, threads);
        try {
          const { labels } = await dir.backfillVrfProofs({
            batch,
            onProgress: (done, last) =>
              io.stderr.write(`backfill: ${done} labels done (last ${toHex(last)})\n`),
          });
          const seconds = (performance.now() - started) / 1000;
          io.stdout.write(
            opts.json === true
              ? `${toJson({ labels, complete: true, seconds: Number(seconds.toFixed(3)) })}\n`
              : `stored the VRF proofs of ${labels} label${labels === 1 ? '' : 's'} in ${seconds.toFixed(2)} s; every version now has its proofs\n`,
          );
        } finally {
          await dir.close();
        }
      },
      SECRET_FOR.backfill,
    );
  });
}
