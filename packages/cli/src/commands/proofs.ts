/**
 * `akd lookup`, `akd history` and `akd audit`: proofs served from a store, as a directory's
 * server would serve them. Each command can write the bare protobuf proof (--out) for a
 * client to check with `akd verify`, and prints what the proof shows after checking it
 * itself, so a broken store is noticed here rather than by a client. None of them reads the
 * VRF secret key: lookups and histories serve the VRF proofs the writer stored as it published.
 */

import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import {
  encodeAppendOnlyProof,
  encodeHistoryProof,
  encodeLookupProof,
  keyHistoryVerify,
  lookupVerify,
  type Configuration,
  type EpochHash,
  type HistoryParams,
} from '@akd-ts/core';
import { parseCount, parseEpoch, parseLabel } from '../args.js';
import { UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { formatHistory, formatLookup, toJson, type ClientQuery } from '../output.js';
import type { StoreOptions } from '../store.js';
import { addStoreOptions, withReader } from './directory.js';

interface ProofOutput extends StoreOptions {
  out?: string;
  json?: boolean;
}

/** Writes the encoded proof when --out asks for it. */
async function save(opts: ProofOutput, bytes: Uint8Array): Promise<void> {
  if (opts.out === undefined) return;
  try {
    await writeFile(opts.out, bytes);
  } catch (e) {
    throw new UsageError(
      `--out: cannot write ${JSON.stringify(opts.out)}: ${(e as Error).message}`,
      { cause: e },
    );
  }
}

/** The query a proof served from the store answers: against the store's own latest root. */
function storeQuery(config: Configuration, label: Uint8Array, at: EpochHash): ClientQuery {
  return {
    config,
    label,
    trusted: { root: at.hash, rootEpoch: at.epoch, source: { kind: 'store' } },
  };
}

/** What lookup and history say of the VRF proofs they serve. */
const STORED_PROOFS_HELP =
  '\nThe VRF proofs come from the store, where the writer put them as it published: a store\n' +
  'written by an older akd-ts needs `akd vrf backfill` once (with the key) first.\n';

function addLookup(program: Command, io: CliIo): void {
  const cmd = program
    .command('lookup')
    .description("prove a label's current value (a LookupProof)")
    .requiredOption('--label <label>', 'the label: UTF-8 text, or raw bytes written hex:<hex>')
    .option('--out <file>', 'write the proof as protobuf bytes (for akd verify lookup)');
  addStoreOptions(cmd);
  cmd.addHelpText('after', STORED_PROOFS_HELP);
  cmd.action(async (opts: ProofOutput & { label: string }) => {
    const label = parseLabel(opts.label);
    await withReader(opts, io, async (reader, store) => {
      const { proof, epochHash } = await reader.lookup(label);
      await save(opts, encodeLookupProof(proof));
      const result = lookupVerify(
        store.config,
        reader.getPublicKey(),
        epochHash.hash,
        epochHash.epoch,
        label,
        proof,
      );
      io.stdout.write(
        formatLookup(storeQuery(store.config, label, epochHash), result, opts.json === true),
      );
    });
  });
}

function addHistory(program: Command, io: CliIo): void {
  const cmd = program
    .command('history')
    .description("prove a label's versions (a HistoryProof): all of them, or the most recent n")
    .requiredOption('--label <label>', 'the label: UTF-8 text, or raw bytes written hex:<hex>')
    .option('--most-recent <n>', 'only the n most recent versions (default: the complete history)')
    .option('--out <file>', 'write the proof as protobuf bytes (for akd verify history)');
  addStoreOptions(cmd);
  cmd.addHelpText('after', STORED_PROOFS_HELP);
  cmd.action(async (opts: ProofOutput & { label: string; mostRecent?: string }) => {
    const label = parseLabel(opts.label);
    const params: HistoryParams =
      opts.mostRecent === undefined
        ? { kind: 'complete' }
        : { kind: 'mostRecent', count: parseCount(opts.mostRecent, '--most-recent') };
    await withReader(opts, io, async (reader, store) => {
      const { proof, epochHash } = await reader.keyHistory(label, params);
      await save(opts, encodeHistoryProof(proof));
      const results = keyHistoryVerify(
        store.config,
        reader.getPublicKey(),
        epochHash.hash,
        epochHash.epoch,
        label,
        proof,
        {
          historyParams: params,
          allowMissingValues: true,
        },
      );
      io.stdout.write(
        formatHistory(storeQuery(store.config, label, epochHash), results, opts.json === true),
      );
    });
  });
}

function addAudit(program: Command, io: CliIo): Command {
  const cmd = program
    .command('audit')
    .description('prove that the tree only grew from one epoch to another (an AppendOnlyProof)')
    .option('--from <epoch>', 'start epoch')
    .option('--to <epoch>', 'end epoch (at most the latest)')
    .option('--out <file>', 'write the proof as protobuf bytes (for akd verify audit)');
  addStoreOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd audit --db sqlite:./akd.db --from 1 --to 2 --out audit-1-2.bin\n\n' +
      'The proof has one step per epoch. Past root hashes are not kept by the directory; an\n' +
      'auditor checks the proof against the roots it recorded (akd verify audit --hashes ...).\n',
  );
  cmd.action(async (opts: ProofOutput & { from?: string; to?: string }) => {
    if (opts.from === undefined || opts.to === undefined) {
      throw new UsageError('--from and --to are required');
    }
    const from = parseEpoch(opts.from, '--from');
    const to = parseEpoch(opts.to, '--to');
    await withReader(opts, io, async (reader, store) => {
      const proof = await reader.audit(from, to);
      await save(opts, encodeAppendOnlyProof(proof));
      const steps = proof.proofs.length;
      const inserted = proof.proofs.reduce((n, p) => n + p.inserted.length, 0);
      if (opts.json === true) {
        io.stdout.write(
          `${toJson({ proof: 'audit', configuration: store.config.name, startEpoch: from, endEpoch: to, steps, inserted, out: opts.out ?? null })}\n`,
        );
      } else {
        io.stdout.write(
          `audit proof: epochs ${from} -> ${to} (${store.config.name}), ${steps} step${steps === 1 ? '' : 's'}, ${inserted} inserted leaves${opts.out === undefined ? '' : `, written to ${opts.out}`}\n`,
        );
      }
    });
  });
  return cmd;
}

/** Adds `lookup`, `history` and `audit` to `program`; returns the audit command for its subcommands. */
export function addProofCommands(program: Command, io: CliIo): Command {
  addLookup(program, io);
  addHistory(program, io);
  return addAudit(program, io);
}
