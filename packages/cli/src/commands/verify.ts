/**
 * `akd verify lookup | history | audit | head`: offline verification of proofs a directory served,
 * against root hashes the caller already trusts. Each command only parses its options, calls
 * the core verifier (spec 11.3, 11.4, 11.5) and prints what was proven.
 */

import { Option, type Command } from 'commander';
import {
  CONFIGURATION_NAMES,
  EXAMPLE_DOMAIN_LABEL,
  auditVerify,
  decodeAppendOnlyProof,
  decodeHistoryProof,
  decodeLookupProof,
  keyHistoryVerify,
  lookupVerify,
  type HistoryVerificationParams,
  type VrfPublicKey,
} from '@akd-ts/core';
import {
  parseConfiguration,
  parseCount,
  parseEpoch,
  parseHashes,
  parseLabel,
  parsePublicKey,
  readProof,
  type ProofOptions,
} from '../args.js';
import type { CliIo } from '../io.js';
import { trustedRoot, type RootOptions } from '../trusted-root.js';
import { formatAudit, formatHistory, formatLookup, type ClientQuery } from '../output.js';
import { addVerifyHead } from './verify-head.js';

// Real values of upstream's whatsapp_v1 test vector (spec 17.1), so the examples are concrete.
const EXAMPLE_KEY = 'f6ec49c8085f4d4be69db8e248bf11ce288026f5b8c5f6599defe58303d0702d';
const EXAMPLE_ROOT = '51f48b4d0e0b6200fcf75a14f959cd5430e3ed27a31144ca545b9c76a23481f0';

interface CommonOptions extends ProofOptions {
  config: string;
  domainLabel?: string;
  json?: boolean;
}

interface ClientOptions extends CommonOptions, RootOptions {
  publicKey: string;
  label: string;
}

interface HistoryOptions extends ClientOptions {
  mostRecent?: string;
  allowTombstones?: boolean;
}

interface AuditOptions extends CommonOptions {
  hashes: string;
  startEpoch?: string;
}

/** The configuration options every verify command starts with. */
function addConfigOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option('--config <name>', 'protocol configuration the directory runs')
        .choices(CONFIGURATION_NAMES)
        .makeOptionMandatory(),
    )
    .option(
      '--domain-label <text>',
      `domain label of the experimental configuration (default: ${EXAMPLE_DOMAIN_LABEL})`,
    );
}

/** What a client check (lookup, history) asks about, and the root it is checked against. */
function addClientOptions(cmd: Command): Command {
  return cmd
    .requiredOption('--public-key <hex>', "the directory's VRF public key (32 bytes, hex)")
    .option(
      '--root <hex>',
      'root hash to check against (32 bytes, hex), from a source you trust rather than the proof',
    )
    .option('--epoch <n>', 'the epoch of --root (your word: a proof does not show it)')
    .option(
      '--signed-head <file>',
      "instead of --root and --epoch: an auditor's signed head (JSON, as akd audit verify --heads writes; the last line is used), which binds a root to its epoch",
    )
    .option('--auditor-key <hex>', "with --signed-head: the auditor's Ed25519 public key you trust")
    .requiredOption('--label <label>', 'the label: UTF-8 text, or raw bytes written hex:<hex>');
}

/** The proof and the output format, which every verify command ends with. */
function addProofOptions(cmd: Command, proofWhat: string): Command {
  return cmd
    .option('--proof <file>', `file holding the ${proofWhat} as protobuf bytes; - reads stdin`)
    .addOption(
      new Option(
        '--proof-hex <hex>',
        'the proof as hex instead of a file; - reads hex from stdin',
      ).conflicts('proof'),
    )
    .option('--json', 'print the verified result as one line of JSON');
}

/** A client check's parsed inputs: the query it echoes, plus the key it trusts. */
interface ClientInputs extends ClientQuery {
  publicKey: VrfPublicKey;
}

async function clientInputs(opts: ClientOptions): Promise<ClientInputs> {
  return {
    config: parseConfiguration(opts.config, opts.domainLabel),
    publicKey: parsePublicKey(opts.publicKey, '--public-key'),
    label: parseLabel(opts.label),
    trusted: await trustedRoot(opts),
  };
}

/** An `Example:` help section: one shell command continued over several lines. */
function example(lines: string[]): string {
  return `\nExample:\n  $ ${lines.join(' \\\n      ')}\n`;
}

function addLookup(verify: Command, io: CliIo): void {
  const cmd = verify
    .command('lookup')
    .description("verify a lookup proof: a label's current version and value (spec 11.3)");
  addProofOptions(addClientOptions(addConfigOptions(cmd)), 'LookupProof');
  cmd.addHelpText(
    'after',
    example([
      'akd verify lookup --config whatsapp_v1',
      `--public-key ${EXAMPLE_KEY}`,
      `--root ${EXAMPLE_ROOT}`,
      '--epoch 49 --label 16 --proof lookup.bin',
    ]) +
      '\nPrints the proven epoch, version and value; exits 1 with the error code when the\n' +
      'proof does not verify.\n',
  );
  cmd.action(async (opts: ClientOptions) => {
    const q = await clientInputs(opts);
    const proof = decodeLookupProof(await readProof(opts, io));
    const { root, rootEpoch } = q.trusted;
    const result = lookupVerify(q.config, q.publicKey, root, rootEpoch, q.label, proof);
    io.stdout.write(formatLookup(q, result, opts.json === true));
  });
}

function addHistory(verify: Command, io: CliIo): void {
  const cmd = verify
    .command('history')
    .description("verify a key history proof: every version of a label's value (spec 11.4)");
  addClientOptions(addConfigOptions(cmd))
    .option(
      '--most-recent <n>',
      'the proof was requested for the n most recent versions only (default: complete history)',
    )
    .option('--allow-tombstones', 'accept versions whose value was deleted (tombstoned)');
  addProofOptions(cmd, 'HistoryProof');
  cmd.addHelpText(
    'after',
    example([
      'akd verify history --config whatsapp_v1',
      `--public-key ${EXAMPLE_KEY}`,
      `--root ${EXAMPLE_ROOT}`,
      '--epoch 49 --label hex:3136 --most-recent 1 --proof history.bin',
    ]) +
      '\nThe history parameters must be the ones the proof was requested with: a complete\n' +
      'history proof does not verify as --most-recent, nor the reverse.\n',
  );
  cmd.action(async (opts: HistoryOptions) => {
    const q = await clientInputs(opts);
    const params: HistoryVerificationParams = {
      historyParams:
        opts.mostRecent === undefined
          ? { kind: 'complete' }
          : { kind: 'mostRecent', count: parseCount(opts.mostRecent, '--most-recent') },
      allowMissingValues: opts.allowTombstones === true,
    };
    const proof = decodeHistoryProof(await readProof(opts, io));
    const results = keyHistoryVerify(
      q.config,
      q.publicKey,
      q.trusted.root,
      q.trusted.rootEpoch,
      q.label,
      proof,
      params,
    );
    io.stdout.write(formatHistory(q, results, opts.json === true));
  });
}

function addAudit(verify: Command, io: CliIo): void {
  const cmd = verify
    .command('audit')
    .description('verify an append-only proof between consecutive published roots (spec 11.5)');
  addConfigOptions(cmd)
    .requiredOption(
      '--hashes <hex,hex,...>',
      'root hashes of consecutive epochs, oldest first, comma-separated (one more than the proof has steps)',
    )
    .option('--start-epoch <n>', 'the epoch of the first hash; the proof must start there');
  addProofOptions(cmd, 'AppendOnlyProof');
  cmd.addHelpText(
    'after',
    example([
      'akd verify audit --config whatsapp_v1',
      '--hashes <root of epoch 1>,<root of epoch 2> --start-epoch 1',
      '--proof audit-1-2.bin',
    ]) + '\nPrints the verified epoch range.\n',
  );
  cmd.action(async (opts: AuditOptions) => {
    const config = parseConfiguration(opts.config, opts.domainLabel);
    const hashes = parseHashes(opts.hashes, '--hashes');
    const options =
      opts.startEpoch === undefined
        ? {}
        : { startEpoch: parseEpoch(opts.startEpoch, '--start-epoch') };
    const proof = decodeAppendOnlyProof(await readProof(opts, io));
    const query = { config, hashes, startEpochGiven: opts.startEpoch !== undefined };
    io.stdout.write(
      formatAudit(query, auditVerify(config, hashes, proof, options), opts.json === true),
    );
  });
}

/**
 * Adds `verify lookup`, `verify history`, `verify audit` and `verify head` to `program`.
 *
 * @example
 * ```ts
 * const program = new Command('akd');
 * addVerifyCommands(program, processIo());
 * ```
 */
export function addVerifyCommands(program: Command, io: CliIo): void {
  const verify = program
    .command('verify')
    .description('verify proofs offline against root hashes you trust');
  addLookup(verify, io);
  addHistory(verify, io);
  addAudit(verify, io);
  addVerifyHead(verify, io);
}
