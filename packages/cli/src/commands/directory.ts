/**
 * `akd init`, `akd publish` and `akd epoch`: creating a directory in a store, publishing
 * updates to it as a new epoch (with progress on stderr, publish-progress.ts), and showing its
 * latest epoch. The store is named by a URL (--db); the VRF secret key lives in a key file or
 * AKD_VRF_KEY (store.ts).
 */

import { writeFile, access } from 'node:fs/promises';
import type { Command } from 'commander';
import {
  CONFIGURATION_NAMES,
  EXAMPLE_DOMAIN_LABEL,
  VrfSecretKey,
  fromHex,
  toHex,
  type Configuration,
} from '@akd-ts/core';
import { StorageManager, type NodeLayout } from '@akd-ts/storage';
import {
  Directory,
  InMemoryVrfKeyStore,
  ReadOnlyDirectory,
  availableThreads,
  type Update,
} from '@akd-ts/directory';
import { parseConfiguration, parseEpoch, quote, readInput } from '../args.js';
import { UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { toJson } from '../output.js';
import { parseUpdates } from '../updates.js';
import { formatPhaseTimes, publishReporter } from './publish-progress.js';
import { sayWhenInterrupted, type PublishState } from './publish-interrupt.js';
import {
  keyFilePath,
  loadSecretKey,
  NODE_LAYOUTS,
  DEFAULT_NODE_LAYOUT,
  openDatabase,
  readKeyFile,
  openStore,
  parseSecretKey,
  readSettings,
  storeUrl,
  writeSettings,
  openPublicStore,
  SECRET_FOR,
  type OpenedStore,
  type PublicStore,
  type StoreOptions,
} from '../store.js';

/** `text` broken into lines of at most `width` characters, at spaces. */
function wrap(text: string, width = 90): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line].join('\n');
}

/**
 * The options of every command that works on a store. `secretFor` says why the command needs
 * the VRF secret key ('' when its help says so itself); commands on public data (no
 * `secretFor`) take no key option at all.
 */
export function addStoreOptions(cmd: Command, secretFor?: string): Command {
  cmd.option(
    '--db <url>',
    'the store: memory:, sqlite:<path> or postgres://... (default: AKD_DB, else sqlite:./akd.db)',
  );
  if (secretFor !== undefined) {
    cmd.option(
      '--key-file <path>',
      'file holding the VRF secret key as hex (default: AKD_VRF_KEY, else AKD_VRF_KEY_FILE, else ./akd.key)',
    );
    if (secretFor !== '')
      cmd.addHelpText('after', `\n${wrap(`The VRF secret key is needed: ${secretFor}.`)}`);
  } else {
    cmd.addHelpText(
      'after',
      '\nReads public data only: no VRF secret key is needed, and a store that does not exist is\nnot created.',
    );
  }
  return cmd.option('--json', 'print the result as one line of JSON');
}

/** The VRF worker threads a writing command uses: --vrf-threads, else all cores. */
export function vrfThreads(option: string | undefined): number {
  if (option === undefined) return availableThreads();
  if (!/^[0-9]+$/.test(option.trim()) || Number(option) > 256) {
    throw new UsageError(
      `--vrf-threads: expected a number of threads from 0 to 256, got ${JSON.stringify(option)}`,
    );
  }
  return Number(option);
}

/**
 * Opens the store's directory for reading (no writer lock: a server may be publishing). A
 * store opened without its secret key gives a reader that serves stored VRF proofs.
 */
export async function openReader(store: PublicStore | OpenedStore): Promise<ReadOnlyDirectory> {
  const common = { config: store.config, storage: new StorageManager(store.db) };
  return ReadOnlyDirectory.open(
    'secretKey' in store
      ? { ...common, vrfKeys: new InMemoryVrfKeyStore(store.secretKey) }
      : { ...common, publicKey: fromHex(store.settings.publicKey) },
  );
}

/** Opens the store's directory for writing with its secret key, VRFs on `threads` threads. */
export function openWriter(store: OpenedStore, threads: number): Promise<Directory> {
  return Directory.open({
    config: store.config,
    storage: new StorageManager(store.db),
    vrfKeys: new InMemoryVrfKeyStore(store.secretKey),
    vrf: { threads },
  });
}

/** Runs `fn` on `store` once it opens, and always closes it. */
async function using<S extends PublicStore, T>(
  opening: Promise<S>,
  fn: (store: S) => Promise<T>,
): Promise<T> {
  const store = await opening;
  try {
    return await fn(store);
  } finally {
    await store.db.close();
  }
}

/**
 * Runs `fn` on the store opened with its secret key (to publish, or as `why` says). The store
 * must exist: only `akd init` creates one, so a mistyped --db leaves nothing behind.
 */
export function withStore<T>(
  opts: StoreOptions,
  io: CliIo,
  fn: (store: OpenedStore) => Promise<T>,
  why: string = SECRET_FOR.publish,
): Promise<T> {
  return using(openStore(opts, io, { why, create: false, migrate: true }), fn);
}

/** Runs `fn` on the store opened for public data only (no secret key, never created). */
export function withPublicStore<T>(
  opts: StoreOptions,
  io: CliIo,
  fn: (store: PublicStore) => Promise<T>,
): Promise<T> {
  return using(openPublicStore(opts, io), fn);
}

/**
 * Runs `fn` with the store's directory opened for reading, without the VRF secret key (proofs
 * serve the VRF proofs stored at publish), never creating the store; closes both after.
 */
export async function withReader<T>(
  opts: StoreOptions,
  io: CliIo,
  fn: (reader: ReadOnlyDirectory, store: PublicStore) => Promise<T>,
): Promise<T> {
  return using(openPublicStore(opts, io), async (store: PublicStore) => {
    const reader = await openReader(store);
    try {
      return await fn(reader, store);
    } finally {
      await reader.close();
    }
  });
}

interface InitOptions extends StoreOptions {
  config: string;
  nodeLayout?: string;
  domainLabel?: string;
  vrfKey?: string;
  json?: boolean;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** The key `akd init` uses: --vrf-key, AKD_VRF_KEY, an existing key file, or a new one. */
async function chooseKey(
  opts: InitOptions,
  io: CliIo,
): Promise<{ key: Uint8Array; source: string }> {
  if (opts.vrfKey !== undefined)
    return { key: parseSecretKey(opts.vrfKey, '--vrf-key'), source: '--vrf-key' };
  const path = keyFilePath(opts, io);
  if (io.env?.['AKD_VRF_KEY'] !== undefined || (await exists(path))) {
    return { key: await loadSecretKey(opts, io), source: 'existing' };
  }
  return { key: crypto.getRandomValues(new Uint8Array(32)), source: 'generated' };
}

/** Writes the key file (mode 0600), refusing to replace a different key. */
async function saveKey(path: string, key: Uint8Array): Promise<void> {
  if (await exists(path)) {
    const current = await readKeyFile(path);
    if (toHex(current) !== toHex(key)) {
      throw new UsageError(
        `--key-file: ${JSON.stringify(path)} already holds another key; refusing to replace it`,
      );
    }
    return;
  }
  await writeFile(path, `${toHex(key)}\n`, { mode: 0o600, flag: 'wx' });
}

function configDescription(config: Configuration, domainLabel: string | undefined): string {
  return config.name === 'experimental'
    ? `experimental (domain label ${domainLabel ?? EXAMPLE_DOMAIN_LABEL})`
    : config.name;
}

/** `--node-layout`: one of NODE_LAYOUTS, or undefined when not given. */
function parseNodeLayout(text: string | undefined): NodeLayout | undefined {
  if (text === undefined) return undefined;
  const layout = NODE_LAYOUTS.find((l) => l === text);
  if (layout === undefined) {
    throw new UsageError(`--node-layout: ${quote(text)} is not ${NODE_LAYOUTS.join(' or ')}`);
  }
  return layout;
}

function addInit(program: Command, io: CliIo): void {
  const cmd = program
    .command('init')
    .description('create a key directory in a store and print its VRF public key');
  addStoreOptions(cmd, '')
    .requiredOption(
      '--config <name>',
      `protocol configuration: ${CONFIGURATION_NAMES.join(' or ')}`,
    )
    .option(
      '--domain-label <text>',
      `domain label of the experimental configuration (default: ${EXAMPLE_DOMAIN_LABEL})`,
    )
    .option('--vrf-key <hex>', 'use this 32-byte VRF secret key instead of generating one')
    .option(
      '--node-layout <layout>',
      `how a new store keeps tree nodes: ${NODE_LAYOUTS.join(' or ')} (default: versions, ` +
        'memory: stores records)',
    );
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd init --db sqlite:./akd.db --config whatsapp_v1\n\n' +
      'Generates a VRF key (unless --vrf-key, AKD_VRF_KEY or an existing key file gives one),\n' +
      'writes it to the key file with mode 0600, creates the empty tree (epoch 0) and records\n' +
      'the configuration and public key in the store. Keep the key file secret and backed up:\n' +
      'without it no proof can be served, and anyone holding it can brute-force values.\n',
  );
  cmd.action(async (opts: InitOptions) => {
    const config = parseConfiguration(opts.config, opts.domainLabel);
    const url = storeUrl(opts, io);
    // a new SQL store keeps versions unless told otherwise; a memory: store, the driver's own
    const nodeLayout =
      parseNodeLayout(opts.nodeLayout) ??
      (url.startsWith('memory:') ? undefined : DEFAULT_NODE_LAYOUT);
    const { key, source } = await chooseKey(opts, io);
    const db = await openDatabase(url, nodeLayout === undefined ? {} : { nodeLayout });
    try {
      const existing = await readSettings(db);
      if (existing !== undefined) {
        throw new UsageError(
          `${url} already holds a directory (${existing.configuration}, public key ${existing.publicKey})`,
        );
      }
      const keyPath = keyFilePath(opts, io);
      const keepKey = !url.startsWith('memory:') && io.env?.['AKD_VRF_KEY'] === undefined;
      if (keepKey) await saveKey(keyPath, key);
      const publicKey = toHex(VrfSecretKey.fromBytes(key).publicKeyBytes);
      const dir = await Directory.open({
        config,
        storage: new StorageManager(db),
        vrfKeys: new InMemoryVrfKeyStore(key),
      });
      const { epoch, hash } = await dir.getEpochHash();
      await dir.close();
      await writeSettings(db, {
        configuration: config.name,
        domainLabel: opts.domainLabel,
        publicKey,
      });
      if (opts.json === true) {
        io.stdout.write(
          `${toJson({ store: url, configuration: config.name, publicKey, epoch, rootHash: toHex(hash), keySource: source, keyFile: keepKey ? keyPath : null })}\n`,
        );
      } else {
        io.stdout.write(
          [
            `initialised ${url} (${configDescription(config, opts.domainLabel)})`,
            `public key: ${publicKey}`,
            `epoch: ${epoch}`,
            `root hash: ${toHex(hash)}`,
            url.startsWith('memory:')
              ? 'note: a memory: store keeps nothing once this process ends'
              : `VRF key: ${source === 'existing' ? 'reused from' : source === 'generated' ? 'generated into' : 'written to'} ${keyPath}`,
            '',
          ].join('\n'),
        );
      }
    } finally {
      await db.close();
    }
  });
}

interface PublishOptions extends StoreOptions {
  json?: boolean;
  allowEmpty?: boolean;
  progress: boolean;
  vrfThreads?: string;
}

function addPublish(program: Command, io: CliIo): void {
  const cmd = program
    .command('publish')
    .description('publish a batch of updates as the next epoch')
    .argument('<updates>', 'JSON lines file of updates, or - for stdin');
  addStoreOptions(cmd, SECRET_FOR.publish)
    .option('--no-progress', 'print no progress on stderr')
    .option('--allow-empty', 'accept input with no update (then nothing is published)')
    .option(
      '--vrf-threads <n>',
      `worker threads for VRF evaluation, 0 for none (default: ${availableThreads()}, the available cores)`,
    );
  cmd.addHelpText(
    'after',
    '\nEach line of <updates> is one update:\n' +
      '  {"label": "alice", "value": "key-1"}          UTF-8 text\n' +
      '  {"labelHex": "00ff", "valueHex": "a1b2"}     raw bytes as hex\n' +
      'Text must be valid UTF-8 without lone surrogates; give other bytes as hex. Blank lines\n' +
      'are skipped; input with no update is refused unless --allow-empty. Every error names\n' +
      'its line, and nothing is published unless every line is right.\n\n' +
      'All lines become one epoch. A label may appear once; a value equal to the current one is\n' +
      'skipped, and when nothing changes no epoch is created.\n\n' +
      'Progress goes to stderr: a bar with throughput on a terminal, a line per phase (and one a\n' +
      'second while computing VRF labels) otherwise. stdout gets the result and the time of\n' +
      'each phase.\n\n' +
      'Example:\n  $ akd publish --db sqlite:./akd.db updates.jsonl\n',
  );
  cmd.action(async (file: string, opts: PublishOptions) => {
    const threads = vrfThreads(opts.vrfThreads);
    const state: PublishState = { store: storeUrl(opts, io) };
    const stopSaying = sayWhenInterrupted(state, io.stderr);
    try {
      await publishFrom(file, opts, threads, state, io);
    } finally {
      stopSaying();
    }
  });
}

/** The body of `akd publish`, reporting how far it got in `state`. */
async function publishFrom(
  file: string,
  opts: PublishOptions,
  threads: number,
  state: PublishState,
  io: CliIo,
): Promise<void> {
  const updates: Update[] = parseUpdates(await readInput(file, '<updates>', io));
  if (updates.length === 0 && opts.allowEmpty !== true) {
    // an empty batch is almost always a broken pipeline upstream, not a wish
    throw new UsageError(
      `<updates>: ${file === '-' ? 'stdin' : quote(file, 200)} holds no update (it is empty or blank); pass --allow-empty to accept that`,
    );
  }
  await withStore(opts, io, async (store) => {
    const started = performance.now();
    const dir = await openWriter(store, threads);
    const reporter = publishReporter(io.stderr, opts.progress);
    try {
      const before = await dir.getEpochHash();
      state.before = before.epoch;
      let phases;
      let result;
      try {
        result = await dir.publish(updates, {
          onProgress: (progress) => {
            state.phase = progress.phase;
            reporter.onProgress(progress);
          },
        });
        state.finished = true;
      } finally {
        // stops the bar on failure too, so the error starts on a line of its own
        phases = reporter.finish();
      }
      const { epoch, hash } = result;
      const changed = epoch !== before.epoch;
      if (changed) phases = { ...phases, proofs: await storeProofs(dir, epoch, state, io, opts) };
      const seconds = (performance.now() - started) / 1000;
      if (opts.json === true) {
        const phaseSeconds = Object.fromEntries(
          Object.entries(phases).map(([k, v]) => [k, Number(v.toFixed(3))]),
        );
        io.stdout.write(
          `${toJson({ epoch, rootHash: toHex(hash), updates: updates.length, newEpoch: changed, seconds: Number(seconds.toFixed(3)), phases: phaseSeconds })}\n`,
        );
      } else if (changed) {
        const rate = updates.length / Math.max(seconds, 1e-9);
        io.stdout.write(
          `published epoch ${epoch}: ${updates.length} update${updates.length === 1 ? '' : 's'} in ${seconds.toFixed(2)} s (${rate.toFixed(0)} labels/s)\nroot hash: ${toHex(hash)}\nphases: ${formatPhaseTimes(phases)}\n`,
        );
      } else {
        io.stdout.write(
          `no change: every value is already published; epoch stays ${epoch}\nroot hash: ${toHex(hash)}\n`,
        );
      }
    } finally {
      await dir.close();
    }
  });
}

/**
 * Waits for the VRF proofs of `epoch`, which the writer stores once the epoch committed, so
 * that servers without the key serve it when the command ends.
 * @returns the seconds it took.
 * @throws the error that stopped them, saying the epoch is published all the same
 */
async function storeProofs(
  dir: Directory,
  epoch: bigint,
  state: PublishState,
  io: CliIo,
  opts: PublishOptions,
): Promise<number> {
  const started = performance.now();
  state.proving = epoch;
  if (opts.progress) io.stderr.write(`publish: storing the VRF proofs of epoch ${epoch}\n`);
  try {
    await dir.vrfProofsStored();
  } catch (e) {
    throw new Error(
      `epoch ${epoch} is published, but its VRF proofs could not be stored (servers without ` +
        `the key serve the epoch before until the next writer stores them): ${e instanceof Error ? e.message : String(e)}`,
      { cause: e },
    );
  }
  state.proving = undefined;
  return (performance.now() - started) / 1000;
}

function addEpoch(program: Command, io: CliIo): void {
  const cmd = program
    .command('epoch')
    .description("print the directory's latest epoch (or --epoch n), root hash and public key");
  addStoreOptions(cmd).option(
    '--epoch <n>',
    'print the root hash published at epoch n instead of the latest (what akd verify audit --hashes takes)',
  );
  cmd.addHelpText(
    'after',
    '\nExample, the roots an audit proof from epoch 0 to 1 is checked against:\n' +
      '  $ akd epoch --db sqlite:./akd.db --epoch 0\n' +
      '  $ akd epoch --db sqlite:./akd.db --epoch 1\n',
  );
  cmd.action(async (opts: StoreOptions & { json?: boolean; epoch?: string }) => {
    const wanted = opts.epoch === undefined ? undefined : parseEpoch(opts.epoch, '--epoch');
    await withReader(opts, io, async (reader, store) => {
      const latest = await reader.latestEpochHash();
      // what lookups and histories are proven at: the epoch before, for a reader without the
      // key, while the writer stores the latest epoch's VRF proofs
      const served = (await reader.getEpochHash()).epoch;
      const { epoch, hash } =
        wanted === undefined ? latest : { epoch: wanted, hash: await reader.getRootHashAt(wanted) };
      const publicKey = toHex(reader.getPublicKey());
      if (opts.json === true) {
        io.stdout.write(
          `${toJson({ epoch, rootHash: toHex(hash), latestEpoch: latest.epoch, servedEpoch: served, publicKey, configuration: store.config.name })}\n`,
        );
      } else {
        const past = epoch === latest.epoch ? '' : ` (the latest is ${latest.epoch})`;
        const lag =
          served === latest.epoch
            ? ''
            : `proofs: served at epoch ${served} until the VRF proofs of epoch ${latest.epoch} are stored\n`;
        io.stdout.write(
          `epoch: ${epoch}${past}\nroot hash: ${toHex(hash)}\npublic key: ${publicKey}\nconfiguration: ${configDescription(store.config, store.settings.domainLabel)}\n${lag}`,
        );
      }
    });
  });
}

/** Adds `init`, `publish` and `epoch` to `program`. */
export function addDirectoryCommands(program: Command, io: CliIo): void {
  addInit(program, io);
  addPublish(program, io);
  addEpoch(program, io);
}
