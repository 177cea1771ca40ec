/**
 * `akd audit export` and `akd audit verify`: the auditor's commands (spec 16). Export writes a
 * directory's history as WhatsApp-format audit blobs (one `SingleAppendOnlyProof` per epoch
 * step, at `<dir>/<epoch>/<previous root>/<current root>`); verify checks a folder of blobs,
 * or an S3-style listing served over HTTP, epoch by epoch as one chain, and can keep watching
 * the listing as a monitor. Everything about blobs is core's (packages/core/src/audit); these
 * commands parse options, move bytes, and report.
 */

import { setTimeout as delay } from 'node:timers/promises';
import { appendFile, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Option, type Command } from 'commander';
import {
  AuditChain,
  CONFIGURATION_NAMES,
  EXAMPLE_DOMAIN_LABEL,
  isAkdError,
  signWitness,
  toHex,
  witnessPublicKey,
  witnessSignatureToJson,
  walkAuditBlobs,
  type AkdError,
  type AuditBlobNaming,
  type AuditHead,
  type Configuration,
  type PlexiCiphersuite,
  type VerifiedAuditBlob,
  type WitnessSignature,
} from '@akd-ts/core';
import { availableThreads, createAuditBlobVerifier, exportAuditBlobs } from '@akd-ts/directory';
import { parseConfiguration, parseCount, parseEpoch, parseHex, quote } from '../args.js';
import { UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { toJson } from '../output.js';
import type { StoreOptions } from '../store.js';
import { addStoreOptions, openReader, withPublicStore } from './directory.js';
import { FOLDER_INDEX, FolderSource, type RefreshableSource } from './audit-blob-sources.js';
import { HttpSource } from './audit-blob-http.js';
import { DEFAULT_MAX_BLOB_MB, DEFAULT_MAX_LISTING_MB } from './audit-blob-limits.js';
import { AuditReporter, type AnchorKind } from './audit-blob-report.js';
import { loadState, readSigningKey, saveState, type AuditState } from './audit-blob-state.js';
import { addAuditWitness } from './audit-witness.js';

/** The folder index `akd audit export` keeps beside the blobs (informative; verify ignores it). */
interface FolderIndex {
  format: 'akd-audit-blobs';
  version: 1;
  configuration: string;
  domainLabel: string | null;
  naming: AuditBlobNaming;
  /** Steps exported: from epoch `from` to epoch `to`. */
  from: string;
  to: string;
  /** The root at `to`. */
  rootHash: string;
  exportedAt: string;
}

/** Reads the folder's index, refusing to mix blobs of another directory or naming. */
async function checkFolder(
  out: string,
  config: Configuration,
  domainLabel: string | null,
  naming: AuditBlobNaming,
): Promise<FolderIndex | undefined> {
  let text: string;
  try {
    text = await readFile(join(out, FOLDER_INDEX), 'utf8');
  } catch {
    return undefined;
  }
  let index: Partial<FolderIndex>;
  try {
    index = JSON.parse(text) as Partial<FolderIndex>;
  } catch {
    throw new UsageError(`--out: ${quote(join(out, FOLDER_INDEX), 200)} is not JSON`);
  }
  if (
    index.format !== 'akd-audit-blobs' ||
    index.configuration !== config.name ||
    (index.domainLabel ?? null) !== domainLabel ||
    index.naming !== naming
  ) {
    throw new UsageError(
      `--out: ${quote(out, 200)} holds blobs of ${index.configuration ?? 'another format'} named by their ${index.naming ?? '?'} epoch; export ${config.name} blobs named by their ${naming} epoch to another folder`,
    );
  }
  return index as FolderIndex;
}

/** Writes a file through a temporary name, so a crash never leaves half a blob. */
async function writeAtomic(path: string, bytes: Uint8Array | string): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, bytes);
  await rename(temp, path);
}

interface ExportOptions extends StoreOptions {
  out: string;
  from?: string;
  to?: string;
  naming: AuditBlobNaming;
  json?: boolean;
}

function addExport(audit: Command, io: CliIo): void {
  const cmd = audit
    .command('export')
    .description("write a range of the directory's audit blobs to a folder (spec 16)")
    .requiredOption('--out <dir>', 'folder to write <epoch>/<previous root>/<current root> into')
    .option('--from <epoch>', 'epoch the first step starts from (default 0)')
    .option('--to <epoch>', 'epoch the last step ends at (default: the latest)')
    .addOption(
      new Option('--naming <naming>', 'which epoch names a blob')
        .choices(['end', 'start'])
        .default('end'),
    );
  addStoreOptions(cmd);
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd audit export --db sqlite:./akd.db --out ./audit-blobs\n\n' +
      'One blob per epoch step: the protobuf SingleAppendOnlyProof of the step, named\n' +
      '<epoch>/<hex previous root>/<hex current root>. By default a blob is named by the epoch\n' +
      'the step ends at, as WhatsApp publishes its blobs and its kt auditor reads them; --naming\n' +
      "start gives upstream's generate_audit_blobs naming. The roots are derived from the proofs\n" +
      "and checked to chain, and against the directory's root when the range ends at the latest\n" +
      'epoch. Check the folder with: akd audit verify ./audit-blobs\n',
  );
  cmd.action(async (opts: ExportOptions) => {
    const from = opts.from === undefined ? 0n : parseEpoch(opts.from, '--from');
    const askedTo = opts.to === undefined ? undefined : parseEpoch(opts.to, '--to');
    await withPublicStore(opts, io, async (store) => {
      const domainLabel = store.settings.domainLabel ?? null;
      const existing = await checkFolder(opts.out, store.config, domainLabel, opts.naming);
      const reader = await openReader(store);
      try {
        const latest = await reader.getEpochHash();
        const to = askedTo ?? latest.epoch;
        if (to <= from) {
          throw new UsageError(
            `nothing to export from epoch ${from} to ${to} (the latest epoch is ${latest.epoch})`,
          );
        }
        const started = performance.now();
        let count = 0;
        let bytes = 0;
        let root = latest.hash;
        for await (const blob of exportAuditBlobs(reader, from, to, { naming: opts.naming })) {
          await writeAtomic(join(opts.out, blob.key), blob.data);
          count++;
          bytes += blob.data.length;
          root = blob.name.currentHash;
        }
        const index: FolderIndex = {
          format: 'akd-audit-blobs',
          version: 1,
          configuration: store.config.name,
          domainLabel,
          naming: opts.naming,
          from: String(
            existing !== undefined && BigInt(existing.from) < from ? existing.from : from,
          ),
          to: String(existing !== undefined && BigInt(existing.to) > to ? existing.to : to),
          rootHash:
            existing !== undefined && BigInt(existing.to) > to ? existing.rootHash : toHex(root),
          exportedAt: new Date().toISOString(),
        };
        await writeAtomic(join(opts.out, FOLDER_INDEX), `${JSON.stringify(index, null, 2)}\n`);
        const seconds = (performance.now() - started) / 1000;
        if (opts.json === true) {
          io.stdout.write(
            `${toJson({ exported: count, from, to, naming: opts.naming, configuration: store.config.name, bytes, rootHash: toHex(root), out: opts.out, seconds: Number(seconds.toFixed(3)) })}\n`,
          );
        } else {
          io.stdout.write(
            `exported ${count} audit blob${count === 1 ? '' : 's'} (epochs ${from} -> ${to}, ${store.config.name}, named by their ${opts.naming} epoch, ${(bytes / 1024).toFixed(1)} KiB) to ${opts.out} in ${seconds.toFixed(2)} s\nroot hash at epoch ${to}: ${toHex(root)}\n`,
          );
        }
      } finally {
        await reader.close();
      }
    });
  });
}

interface VerifyOptions {
  config: string;
  domainLabel?: string;
  naming: AuditBlobNaming | 'auto';
  trust?: string;
  state?: string;
  follow?: boolean;
  interval: string;
  untilEpoch?: string;
  progressEvery: string;
  readAhead: string;
  threads?: string;
  timeout: string;
  maxBlobMb: string;
  maxListingMb: string;
  signKey?: string;
  ciphersuite: string;
  namespace?: string;
  heads?: string;
  json?: boolean;
}

/** `--ciphersuite`: Plexi's 0x0001 (protobuf) or 0x0002 (bincode), written in hex or decimal. */
function parseCiphersuite(text: string): PlexiCiphersuite {
  const t = text.trim().toLowerCase();
  if (t === '0x0001' || t === '0x1' || t === '1') return 0x0001;
  if (t === '0x0002' || t === '0x2' || t === '2') return 0x0002;
  throw new UsageError(
    `--ciphersuite: expected 0x0001 (protobuf) or 0x0002 (bincode), got ${quote(text)}`,
  );
}

/** `--trust <epoch>:<root>`. */
function parseTrust(text: string): AuditHead {
  const colon = text.indexOf(':');
  if (colon < 0) throw new UsageError(`--trust: expected <epoch>:<root hash>, got ${quote(text)}`);
  return {
    epoch: parseEpoch(text.slice(0, colon), '--trust epoch'),
    rootHash: parseHex(text.slice(colon + 1), '--trust root', 32),
  };
}

function parseSeconds(text: string, option: string): number {
  const value = /^[0-9]+(\.[0-9]+)?$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(value > 0))
    throw new UsageError(`${option}: expected a positive number of seconds, got ${quote(text)}`);
  return value;
}

function parseNonNegative(text: string, option: string): number {
  if (!/^[0-9]{1,4}$/.test(text.trim())) {
    throw new UsageError(`${option}: expected a small non-negative integer, got ${quote(text)}`);
  }
  return Number(text.trim());
}

/** A size option in MiB, from 1 to `max`, as bytes. */
function parseMebibytes(text: string, option: string, max: number): number {
  const value = /^[0-9]{1,5}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(value >= 1 && value <= max)) {
    throw new UsageError(`${option}: expected 1 to ${max} (MiB), got ${quote(text)}`);
  }
  return value * 1024 * 1024;
}

/** How an HTTP source is read: its timeout and its size limits. */
interface SourceBounds {
  timeoutMs: number;
  maxBlobBytes: number;
  maxListingBytes: number;
}

/** The source named by the command's argument: an http(s) listing URL or a folder. */
async function openSource(text: string, bounds: SourceBounds): Promise<RefreshableSource> {
  if (/^https?:\/\//i.test(text)) {
    try {
      new URL(text);
    } catch {
      throw new UsageError(`<source>: ${quote(text, 200)} is not a valid URL`);
    }
    return new HttpSource(text, bounds);
  }
  let isDir: boolean;
  try {
    isDir = (await stat(text)).isDirectory();
  } catch {
    throw new UsageError(
      `<source>: ${quote(text, 200)}: no such folder (give a folder of blobs or an http(s) URL)`,
    );
  }
  if (!isDir) throw new UsageError(`<source>: ${quote(text, 200)} is not a folder`);
  return new FolderSource(text, bounds.maxBlobBytes);
}

/** Errors a monitor waits out (the listing is down or mid-update) rather than stops on. */
const TRANSIENT = new Set(['STORAGE_CONNECTION', 'STORAGE_NOT_FOUND']);

/** The start of the chain: the state file, --trust, or nothing (settled by the first blob). */
function startingPoint(
  opts: VerifyOptions,
  config: Configuration,
  domainLabel: string | null,
  state: AuditState | undefined,
): {
  anchor: AuditHead | undefined;
  kind: AnchorKind | undefined;
  naming: AuditBlobNaming | 'auto';
} {
  const trust = opts.trust === undefined ? undefined : parseTrust(opts.trust);
  const pinned = opts.naming === 'auto' ? undefined : opts.naming;
  if (state === undefined) {
    const kind = trust === undefined ? undefined : trust.epoch === 0n ? 'genesis' : 'trusted';
    return { anchor: trust, kind, naming: opts.naming };
  }
  if (state.configuration !== config.name || state.domainLabel !== domainLabel) {
    throw new UsageError(
      `--state: the state file is for ${state.configuration}${state.domainLabel === null ? '' : ` (domain label ${state.domainLabel})`}, not ${config.name}${domainLabel === null ? '' : ` (domain label ${domainLabel})`}`,
    );
  }
  if (pinned !== undefined && state.naming !== undefined && pinned !== state.naming) {
    throw new UsageError(
      `--naming ${pinned}: the state file's blobs are named by their ${state.naming} epoch`,
    );
  }
  if (trust !== undefined) {
    if (state.head.epoch < trust.epoch) {
      throw new UsageError(
        `--trust: the state file is at epoch ${state.head.epoch}, before the trusted epoch ${trust.epoch}`,
      );
    }
    if (state.head.epoch === trust.epoch && toHex(state.head.rootHash) !== toHex(trust.rootHash)) {
      throw new UsageError(`--trust: the state file has another root for epoch ${trust.epoch}`);
    }
  }
  return { anchor: state.head, kind: 'state', naming: pinned ?? state.naming ?? 'auto' };
}

async function verify(sourceText: string, opts: VerifyOptions, io: CliIo): Promise<void> {
  const config = parseConfiguration(opts.config, opts.domainLabel);
  const domainLabel =
    config.name === 'experimental' ? (opts.domainLabel ?? EXAMPLE_DOMAIN_LABEL) : null;
  const every = parseCount(opts.progressEvery, '--progress-every');
  const intervalMs = parseSeconds(opts.interval, '--interval') * 1000;
  const bounds: SourceBounds = {
    timeoutMs: parseSeconds(opts.timeout, '--timeout') * 1000,
    // a Buffer holds at most 4 GiB, a string 2^29 - 24 characters
    maxBlobBytes: parseMebibytes(opts.maxBlobMb, '--max-blob-mb', 4095),
    maxListingBytes: parseMebibytes(opts.maxListingMb, '--max-listing-mb', 511),
  };
  const readAhead = parseNonNegative(opts.readAhead, '--read-ahead');
  const threads =
    opts.threads === undefined ? availableThreads() : parseNonNegative(opts.threads, '--threads');
  const untilEpoch =
    opts.untilEpoch === undefined ? undefined : parseEpoch(opts.untilEpoch, '--until-epoch');
  if (opts.heads !== undefined && opts.signKey === undefined) {
    throw new UsageError('--heads needs --sign-key (the heads file holds signed heads)');
  }
  const ciphersuite = parseCiphersuite(opts.ciphersuite);
  const signingKey = opts.signKey === undefined ? undefined : await readSigningKey(opts.signKey);
  const namespace = opts.namespace ?? sourceText;
  const source = await openSource(sourceText, bounds);
  const state = opts.state === undefined ? undefined : await loadState(opts.state);
  const start = startingPoint(opts, config, domainLabel, state);
  let chain: AuditChain;
  try {
    chain = new AuditChain(config, { naming: start.naming, anchor: start.anchor });
  } catch (e) {
    throw new UsageError(`--trust: ${(e as Error).message}`, { cause: e });
  }

  // blobs are verified on worker threads and accepted by the chain in epoch order
  const verifier = createAuditBlobVerifier(config, { threads });
  const reporter = new AuditReporter(io, { json: opts.json === true, every });
  const controller = new AbortController();
  let anchorKind = start.kind;
  let runStart = chain.head;
  let signedHead: WitnessSignature | undefined;
  let failure: AkdError | undefined;
  let stopped: 'end' | 'interrupted' | 'until-epoch' = 'end';
  const reached = () => untilEpoch !== undefined && (chain.head?.epoch ?? -1n) >= untilEpoch;

  const persist = async () => {
    const head = chain.head;
    if (opts.state === undefined || head === undefined) return;
    await saveState(opts.state, {
      source: sourceText,
      configuration: config.name,
      domainLabel,
      naming: chain.naming,
      head,
      verified: (state?.verified ?? 0) + reporter.verified,
      failure: failure && { code: failure.code, message: failure.message },
      signedHead,
    });
  };

  const onVerified = async (v: VerifiedAuditBlob) => {
    if (runStart === undefined || anchorKind === undefined) {
      runStart ??= { epoch: v.startEpoch, rootHash: v.name.previousHash };
      anchorKind ??= v.startEpoch === 0n ? 'genesis' : 'first-use';
    }
    if (signingKey !== undefined) {
      // Plexi's SignatureMessage: for an akd log the digest is the root at the epoch
      signedHead = signWitness(
        {
          ciphersuite,
          namespace,
          timestamp: BigInt(Date.now()),
          epoch: v.endEpoch,
          digest: v.name.currentHash,
        },
        signingKey,
      );
      if (opts.heads !== undefined) {
        await appendFile(opts.heads, `${JSON.stringify(witnessSignatureToJson(signedHead))}\n`);
      }
    }
    reporter.blob(v.endEpoch, v.bytes);
    if (reporter.verified % every === 0) await persist();
    if (reached()) controller.abort();
  };

  const onSignal = () => controller.abort();
  if (opts.follow === true) {
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
  let waiting = false;
  try {
    while (!reached()) {
      try {
        await source.refresh();
        const walk = await walkAuditBlobs(chain, source, {
          signal: controller.signal,
          prefetch: source.remote ? readAhead : 0,
          onVerified,
          ...(verifier.threads > 0
            ? { verifier: verifier.verify, concurrency: 2 * verifier.threads }
            : {}),
        });
        if (walk.ended === 'empty' && opts.follow !== true) {
          throw new UsageError(`<source>: ${quote(source.description, 200)} holds no audit blobs`);
        }
        if (walk.verified > 0) waiting = false;
      } catch (e) {
        if (!isAkdError(e)) throw e;
        if (opts.follow === true && source.remote && TRANSIENT.has(e.code)) {
          reporter.note(
            'retry',
            `the source failed (${e.code}: ${e.message}); retrying in ${intervalMs / 1000} s`,
          );
        } else {
          failure = e;
          break;
        }
      }
      if (reached()) {
        stopped = 'until-epoch';
        break;
      }
      if (opts.follow !== true) break;
      if (controller.signal.aborted) {
        stopped = 'interrupted';
        break;
      }
      if (!waiting) {
        const at =
          chain.head === undefined ? 'no blob yet' : `verified through epoch ${chain.head.epoch}`;
        reporter.note('waiting', `${at}; checking for new epochs every ${intervalMs / 1000} s`);
        waiting = true;
      }
      await delay(intervalMs, undefined, { signal: controller.signal }).catch(() => undefined);
      if (controller.signal.aborted) {
        stopped = 'interrupted';
        break;
      }
    }
    if (reached() && failure === undefined) stopped = 'until-epoch';
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await verifier.close();
  }

  await persist();
  reporter.summary({
    source: source.description,
    configuration: config.name,
    naming: chain.naming,
    anchor: anchorKind ?? 'none',
    start: runStart,
    head: chain.head,
    failure:
      failure === undefined
        ? undefined
        : {
            code: failure.code,
            message: failure.message,
            epoch: chain.head === undefined ? undefined : chain.head.epoch + 1n,
          },
    signedHead:
      signedHead === undefined || signingKey === undefined
        ? undefined
        : { head: signedHead, publicKey: witnessPublicKey(signingKey) },
    stopped,
  });
  if (failure !== undefined) throw failure;
}

function addVerify(audit: Command, io: CliIo): void {
  const cmd = audit
    .command('verify')
    .description('verify a folder or an HTTP listing of audit blobs, epoch by epoch, as one chain')
    .argument('<source>', 'a folder written by akd audit export, or an http(s) listing URL')
    .addOption(
      new Option('--config <name>', 'protocol configuration')
        .choices([...CONFIGURATION_NAMES])
        .default('whatsapp_v1'),
    )
    .option(
      '--domain-label <text>',
      `domain label of the experimental configuration (default: ${EXAMPLE_DOMAIN_LABEL})`,
    )
    .addOption(
      new Option('--naming <naming>', 'which epoch names a blob (auto: whichever verifies)')
        .choices(['auto', 'end', 'start'])
        .default('auto'),
    )
    .option('--trust <epoch:root>', 'start from this trusted root of this epoch (hex)')
    .option('--state <file>', 'resume from, and save to, this state file')
    .option('--follow', 'keep polling the source for new epochs until interrupted')
    .option('--interval <seconds>', 'with --follow: seconds between polls', '60')
    .option('--until-epoch <epoch>', 'stop once this epoch is verified')
    .option('--progress-every <n>', 'a progress line every n verified blobs', '1000')
    .option('--read-ahead <n>', 'over HTTP: blobs fetched ahead while one is verified', '4')
    .option(
      '--threads <n>',
      'worker threads verifying blobs at once (default: the cores; 0: this thread)',
    )
    .option(
      '--timeout <seconds>',
      'over HTTP: seconds to wait for an answer, and then for each part of its body',
      '30',
    )
    .option(
      '--max-blob-mb <n>',
      "refuse a blob larger than this many MiB (the default is WhatsApp's largest known blob, 291.6 MB, with room to grow; a blob is held whole while it is verified)",
      String(DEFAULT_MAX_BLOB_MB),
    )
    .option(
      '--max-listing-mb <n>',
      "over HTTP: refuse a listing page larger than this many MiB (the default is 30 times a page of WhatsApp's, 1,000 keys)",
      String(DEFAULT_MAX_LISTING_MB),
    )
    .option(
      '--sign-key <file>',
      "sign each verified head, as Plexi's SignatureMessage, with this Ed25519 key (64 hex digits)",
    )
    .option(
      '--ciphersuite <id>',
      "with --sign-key: Plexi's ciphersuite, 0x0001 (protobuf) or 0x0002 (bincode)",
      '0x0001',
    )
    .option('--namespace <text>', 'the log named in signed heads (default: <source>)')
    .option(
      '--heads <file>',
      "with --sign-key: append every signed head to this file (Plexi's JSON, one per line)",
    )
    .option('--json', 'print progress and the summary as JSON lines');
  cmd.addHelpText(
    'after',
    '\nExamples:\n' +
      '  $ akd audit verify ./audit-blobs --state audit.state\n' +
      '  $ akd audit verify http://localhost:8080/v1/audit-blobs --follow --interval 30 --state audit.state\n' +
      '\nEach blob must prove its step append-only, start from the root the previous blob ended at,\n' +
      'and follow it with no epoch missing. The chain starts at --trust, at the state file, at the\n' +
      "empty tree when the first blob is epoch 0's, or else at the first blob (trust on first use).\n" +
      'Over HTTP only uncompressed answers are read, each within its size limit; a failure of the\n' +
      'network (STORAGE_CONNECTION) ends the run, or with --follow is retried at the next poll.\n' +
      'Exit status: 0 when every blob verified, 1 at the first failure (its code and reason are\n' +
      'printed), 2 for a usage error.\n',
  );
  cmd.action(async (sourceText: string, opts: VerifyOptions) => {
    await verify(sourceText, opts, io);
  });
}

/**
 * Adds `export` and `verify` under `akd audit` (the command addProofCommands returns).
 *
 * @example addAuditBlobCommands(addProofCommands(program, io), io);
 */
export function addAuditBlobCommands(audit: Command, io: CliIo): void {
  // Commander lets a command read its options anywhere on the line; `audit` has --from, --to,
  // --out and --json of its own, so without positional options `akd audit export --from 1`
  // would give --from to `audit`. Positional options make each command read its own.
  audit.parent?.enablePositionalOptions();
  audit.enablePositionalOptions();
  addExport(audit, io);
  addVerify(audit, io);
  addAuditWitness(audit, io);
}
