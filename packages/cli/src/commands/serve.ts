/**
 * `akd serve`: the HTTP API and the verifying web page over a store (@akd-ts/server), run as a
 * cluster: `--workers` proof server processes sharing the port, and, with a publish token
 * (AKD_PUBLISH_TOKEN or --publish-token-file), one writer process that holds the store's
 * writer lock and does every publish, so that no process answering lookups ever publishes.
 * Without a token it is read-only and picks up epochs another process publishes (`akd
 * publish`, another server). `--demo` serves a demo directory, created on first use. SIGINT
 * and SIGTERM stop it gracefully; it exits non-zero when the writer cannot go on (its lock
 * lost for good, or it keeps crashing). Over a fenced store (a fail-over's old primary) it
 * serves proofs and refuses publishes, saying so. JSON log lines go to stdout; messages for people
 * go to stderr.
 */

import { access, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { AkdError, VrfSecretKey, configurationByName, isAkdError, toHex } from '@akd-ts/core';
import { MemoryDatabase, StorageManager, type Database } from '@akd-ts/storage';
import {
  Directory,
  InMemoryVrfKeyStore,
  VRF_PROOFS_COMPLETE,
  VRF_PROOFS_SETTING,
} from '@akd-ts/directory';
import {
  DEFAULT_AUDIT_BLOB_CACHE_BYTES,
  DEFAULT_MEMORY_PROOF_CACHE_BYTES,
  DEFAULT_PROOF_CACHE_BYTES,
  DEFAULT_PROOF_HEAP_MB,
  DEFAULT_WRITER_RECYCLE_MB,
  DEFAULT_WRITER_SLEEP_MS,
  PROOF_SQLITE_MMAP_BYTES,
  demoEpochs,
  startCluster,
  type RunningCluster,
  type ServeConfig,
} from '@akd-ts/server';
import { quote } from '../args.js';
import { vrfThreads } from './directory.js';
import { collect, parseWitnesses } from './serve-witnesses.js';
import { CommandFailure, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import {
  openDatabase,
  openPublicStore,
  openStore,
  readKeyFile,
  readSettings,
  settingsConfiguration,
  writeSettings,
  type OpenedStore,
  type PublicStore,
} from '../store.js';

/** The demo's store and key file, in the current directory. */
export const DEMO_DB = 'sqlite:./akd-demo.db';
export const DEMO_KEY_FILE = './akd-demo.key';
/** Where the demo goes when the SQLite driver cannot be loaded. */
const DEMO_FALLBACK = 'memory:demo';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

interface ServeOptions {
  db?: string;
  keyFile?: string;
  port: string;
  host: string;
  publishTokenFile?: string;
  poll: string;
  logLevel?: string;
  demo?: boolean;
  vrfThreads?: string;
  workers?: string;
  connectionSpread?: boolean;
  drain: string;
  cacheMb?: string;
  auditCacheMb?: string;
  sqliteMapMb?: string;
  proofHeapMb?: string;
  writerSleep: string;
  writerRecycleMb: string;
  witness?: string[];
  witnessNamespace?: string;
}

/**
 * `text` (an option's value) as a whole number from `min` to `max`, or 0 when `zero` allows
 * it below `min`.
 * @throws UsageError naming the option and what it expects (`expects`)
 */
function wholeNumber(
  option: string,
  text: string,
  range: { min: number; max: number; zero?: boolean; expects: string },
): number {
  const n = /^[0-9]{1,10}$/.test(text) ? Number(text) : NaN;
  if (!((n >= range.min && n <= range.max) || (range.zero === true && n === 0))) {
    throw new UsageError(`${option}: expected ${range.expects}, got ${quote(text)}`);
  }
  return n;
}

const parsePort = (text: string) =>
  wholeNumber('--port', text, { min: 0, max: 65_535, expects: '0 to 65535' });

/** --workers: 1 to 256 proof server processes (default: the available cores). */
const parseWorkers = (text: string | undefined) =>
  text === undefined
    ? availableParallelism()
    : wholeNumber('--workers', text, { min: 1, max: 256, expects: '1 to 256 processes' });

/** A cache bound option: 0 (none) to 65,536 MiB, in bytes; undefined when not given. */
const cacheMebibytes = (option: string) => (text: string | undefined) =>
  text === undefined
    ? undefined
    : wholeNumber(option, text, { min: 0, max: 65_536, expects: '0 to 65536 (MiB)' }) * 1024 * 1024;

/** --cache-mb: each proof server's record cache. */
const parseCacheMb = cacheMebibytes('--cache-mb');

/** --audit-cache-mb: each proof server's audit blob cache. */
const parseAuditCacheMb = cacheMebibytes('--audit-cache-mb');

/** --sqlite-map-mb: how much of a SQLite store each proof server maps for its reads. */
const parseSqliteMapMb = cacheMebibytes('--sqlite-map-mb');

/** --proof-heap-mb: each proof server's V8 heap limit, 0 (V8's own) or 64 to 65,536 MiB. */
const parseProofHeapMb = (text: string | undefined) =>
  text === undefined
    ? undefined
    : wholeNumber('--proof-heap-mb', text, {
        min: 64,
        max: 65_536,
        zero: true,
        expects: '0 or 64 to 65536 (MiB)',
      });

const parseDrain = (text: string) =>
  wholeNumber('--drain', text, { min: 0, max: 9_999_999, expects: 'milliseconds' });

const parsePoll = (text: string) =>
  wholeNumber('--poll', text, { min: 10, max: 999_999_999, expects: 'at least 10 (ms)' });

/** --writer-recycle-mb: a writer's idle memory past which a new one takes over, 0 (never). */
const parseWriterRecycleMb = (text: string) =>
  wholeNumber('--writer-recycle-mb', text, {
    min: 0,
    max: 1_048_576,
    expects: '0 to 1048576 (MiB)',
  });

/** --writer-sleep: a memory store writer's idle time before it stops, 0 (never) to a day. */
const parseWriterSleep = (text: string) =>
  wholeNumber('--writer-sleep', text, {
    min: 0,
    max: 86_400_000,
    expects: '0 to 86400000 (ms)',
  });

/** The publish token: --publish-token-file, else AKD_PUBLISH_TOKEN, else none. */
async function publishToken(opts: ServeOptions, io: CliIo): Promise<string | undefined> {
  let token: string | undefined;
  let source = 'AKD_PUBLISH_TOKEN';
  if (opts.publishTokenFile !== undefined) {
    source = `--publish-token-file ${JSON.stringify(opts.publishTokenFile)}`;
    try {
      token = (await readFile(opts.publishTokenFile, 'utf8')).trim();
    } catch (e) {
      throw new UsageError(
        `${source}: cannot read it: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        { cause: e },
      );
    }
  } else {
    token = io.env?.['AKD_PUBLISH_TOKEN']?.trim();
    if (token === '') token = undefined;
  }
  // never echo the token: it is a secret
  if (token !== undefined && (token.length < 16 || /\s/.test(token))) {
    throw new UsageError(
      `${source}: a publish token has at least 16 characters and no spaces (try: openssl rand -hex 32)`,
    );
  }
  return token;
}

/** True when `e` says the SQLite driver (or its native module) cannot be loaded. */
export function driverMissing(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException).code;
  const message = e instanceof Error ? e.message : String(e);
  return (
    code === 'ERR_MODULE_NOT_FOUND' ||
    code === 'MODULE_NOT_FOUND' ||
    /bindings|better[-_]sqlite3|NODE_MODULE_VERSION|Cannot find (module|package)/i.test(message)
  );
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/**
 * Opens the demo store, falling back to memory when the SQLite driver is missing, and fills
 * it with the demo directory when it is empty.
 */
async function openDemo(opts: ServeOptions, io: CliIo): Promise<OpenedStore> {
  let url = opts.db ?? DEMO_DB;
  const keyPath = opts.keyFile ?? DEMO_KEY_FILE;
  let db: Database;
  try {
    db = await openDatabase(url);
  } catch (e) {
    if (!url.startsWith('sqlite:') || !driverMissing(e)) throw e;
    io.stderr.write(
      `note: the SQLite driver is not available (${(e as Error).message.split('\n')[0]}); the demo runs on an in-memory store (${DEMO_FALLBACK}), which keeps nothing when the server stops\n`,
    );
    url = DEMO_FALLBACK;
    db = await openDatabase(url);
  }
  const memory = url.startsWith('memory:');
  try {
    let settings = await readSettings(db);
    let secretKey: Uint8Array;
    if (settings === undefined) {
      const config = configurationByName('whatsapp_v1');
      if (!memory && (await exists(keyPath))) {
        secretKey = await readKeyFile(keyPath);
      } else {
        secretKey = crypto.getRandomValues(new Uint8Array(32));
        if (!memory) await writeFile(keyPath, `${toHex(secretKey)}\n`, { mode: 0o600, flag: 'wx' });
      }
      io.stderr.write(
        `creating the demo directory in ${url}${memory ? '' : ` (VRF key in ${keyPath})`}...\n`,
      );
      const dir = await Directory.open({
        config,
        storage: new StorageManager(db),
        vrfKeys: new InMemoryVrfKeyStore(secretKey),
      });
      try {
        for (const updates of demoEpochs()) await dir.publish(updates);
      } finally {
        await dir.close();
      }
      settings = {
        configuration: config.name,
        domainLabel: undefined,
        publicKey: toHex(VrfSecretKey.fromBytes(secretKey).publicKeyBytes),
      };
      await writeSettings(db, settings);
    } else {
      if (memory) {
        throw new UsageError(
          `${url} already holds a directory that is not the demo's; use another --db`,
        );
      }
      secretKey = await readKeyFile(keyPath);
      const publicKey = toHex(VrfSecretKey.fromBytes(secretKey).publicKeyBytes);
      if (publicKey !== settings.publicKey.toLowerCase()) {
        throw new UsageError(`${keyPath} does not hold the VRF key of the directory in ${url}`);
      }
    }
    return { url, db, settings, config: settingsConfiguration(settings), secretKey };
  } catch (e) {
    await db.close();
    throw e;
  }
}

/**
 * Says at start when the store lacks the VRF proofs of versions published before they were
 * stored: the proof servers hold no key, so lookups and histories of those labels fail with
 * VRF_PROOF_MISSING until the proofs are backfilled. Serving goes on (labels published since
 * are served); no server falls back to the key.
 */
async function warnWithoutStoredProofs(store: PublicStore, io: CliIo): Promise<void> {
  if ((await store.db.getSetting(VRF_PROOFS_SETTING)) === VRF_PROOFS_COMPLETE) return;
  io.stderr.write(
    `akd serve: warning: ${store.url} lacks the stored VRF proofs of versions published before ` +
      'akd-ts stored them; proof servers hold no VRF key, so lookups and histories of those ' +
      'labels fail (500 VRF_PROOF_MISSING) until `akd vrf backfill --db ' +
      `${store.url} --key-file <path>\` runs once (docs/operating.md, "The VRF key")\n`,
  );
}

/** Listening errors a child reports (a port in use, an address that is not ours). */
const LISTEN_ERRORS = /^(EADDRINUSE|EACCES|EADDRNOTAVAIL|ENOTFOUND)\b/;

/** Resolves on the first SIGINT or SIGTERM, with its name. */
function nextSignal(): { signal: Promise<NodeJS.Signals>; remove: () => void } {
  let handler!: (s: NodeJS.Signals) => void;
  const signal = new Promise<NodeJS.Signals>((resolve) => (handler = resolve));
  for (const s of ['SIGINT', 'SIGTERM'] as const) process.once(s, handler);
  return {
    signal,
    remove: () => {
      for (const s of ['SIGINT', 'SIGTERM'] as const) process.off(s, handler);
    },
  };
}

/**
 * Serves `store` until SIGINT or SIGTERM, or until the cluster cannot go on; resolves once
 * everything is closed (throws when it stopped on an error).
 */
async function serve(
  store: PublicStore & { secretKey?: Uint8Array },
  opts: ServeOptions,
  io: CliIo,
  token: string | undefined,
) {
  const port = parsePort(opts.port);
  const pollMs = parsePoll(opts.poll);
  const workers = parseWorkers(opts.workers);
  const level = opts.logLevel ?? (opts.demo === true ? 'warn' : 'info');
  const witnesses = parseWitnesses(opts.witness, opts.witnessNamespace);
  // a memory store stays here and is replicated to the processes; others they open themselves
  const memory = store.db instanceof MemoryDatabase ? store.db : undefined;
  await warnWithoutStoredProofs(store, io);
  if (memory === undefined) await store.db.close();
  const config: ServeConfig = {
    storeUrl: store.url,
    configuration: store.settings.configuration,
    publicKey: store.settings.publicKey,
    ...(store.settings.domainLabel === undefined
      ? {}
      : { domainLabel: store.settings.domainLabel }),
    port,
    host: opts.host,
    ...(token === undefined ? {} : { publishToken: token }),
    ...(witnesses === undefined ? {} : { witnesses }),
    pollMs,
    logLevel: level,
    ...(opts.vrfThreads === undefined ? {} : { vrfThreads: vrfThreads(opts.vrfThreads) }),
    drainMs: parseDrain(opts.drain),
    writerSleepMs: parseWriterSleep(opts.writerSleep),
    writerRecycleMb: parseWriterRecycleMb(opts.writerRecycleMb),
  };
  const cacheBytes = parseCacheMb(opts.cacheMb);
  if (cacheBytes !== undefined) config.cacheBytes = cacheBytes;
  const auditCacheBytes = parseAuditCacheMb(opts.auditCacheMb);
  if (auditCacheBytes !== undefined) config.auditCacheBytes = auditCacheBytes;
  const sqliteMapBytes = parseSqliteMapMb(opts.sqliteMapMb);
  if (sqliteMapBytes !== undefined) config.sqliteMapBytes = sqliteMapBytes;
  const proofHeapMb = parseProofHeapMb(opts.proofHeapMb);
  const signals = nextSignal();
  let running: RunningCluster;
  try {
    running = await startCluster({
      config,
      // the writer process alone gets the key; a read-only server has none to give
      ...(token === undefined || store.secretKey === undefined
        ? {}
        : { secretKey: store.secretKey }),
      workers,
      spreadConnections: opts.connectionSpread === true,
      ...(proofHeapMb === undefined ? {} : { proofHeapMb }),
      ...(memory === undefined ? {} : { memory }),
      log: (line) => io.stdout.write(`${line}\n`),
      stderr: (text) => io.stderr.write(text),
      onFenced: (reason) =>
        io.stderr.write(
          `akd serve: publishing is over on this server: ${reason}\n` +
            'akd serve: proofs are still served; publishes are refused (409 STORAGE_LOCKED) and ' +
            '/readyz reports not ready until akd serve is restarted with --db naming the ' +
            "directory's writable copy (docs/operating.md, Fail-over)\n",
        ),
    });
  } catch (e) {
    signals.remove();
    const message = e instanceof Error ? e.message : String(e);
    const listen = LISTEN_ERRORS.exec(message);
    if (listen !== null) {
      throw new UsageError(`cannot listen on ${opts.host}:${port}: ${listen[1]}`, { cause: e });
    }
    throw e;
  } finally {
    store.secretKey?.fill(0);
  }
  const epoch = (await (await fetch(`${running.url}/v1/epoch`)).json()) as {
    epoch: string;
    rootHash: string;
  };
  io.stderr.write(
    [
      `akd serve: ${running.url}/ (the web page), API under ${running.url}/v1/ (see /openapi.json)`,
      `store: ${store.url} (${store.config.name}), epoch ${epoch.epoch}, root hash ${epoch.rootHash}`,
      `processes: ${workers} proof server${workers === 1 ? '' : 's'}${token === undefined ? '' : ' and a writer'}${token !== undefined && memory !== undefined && config.writerSleepMs! > 0 ? ` (which stops after ${config.writerSleepMs} ms without a publish: it holds a copy of the memory store; the next publish starts it again)` : ''}`,
      token === undefined
        ? `read-only: publishing is off; new epochs in the store are picked up every ${pollMs} ms`
        : running.fenced() !== undefined
          ? 'publishing: off, the store is fenced (see above); proofs are served read-only'
          : 'publishing: on (POST /v1/publish with the bearer token, done by the writer process)',
      'stop with Ctrl-C',
      '',
    ].join('\n'),
  );
  const stopped = await Promise.race([
    signals.signal.then((signal) => ({ signal })),
    running.done.then(() => ({ signal: undefined })),
  ]);
  signals.remove();
  const code = await running.close();
  if (stopped.signal !== undefined && code === 0) {
    io.stderr.write(`akd serve: stopped (${stopped.signal})\n`);
    return;
  }
  throw stoppedError(running.error(), code);
}

/**
 * Why `akd serve` stopped on its own, for its last line: with the catalogue code when the
 * reason has one (`STORAGE_LOCKED`: the writer lost its lock for good).
 */
export function stoppedError(reason: Error | undefined, code: number): Error {
  const text = `akd serve stopped: ${reason?.message ?? `exit code ${code}`}`;
  return isAkdError(reason) ? new AkdError(reason.code, text) : new CommandFailure(text);
}

/** Adds `akd serve` to `program`. */
export function addServeCommands(program: Command, io: CliIo): void {
  const cmd = program
    .command('serve')
    .description('serve the directory over HTTP: the API and the web page that verifies lookups')
    .option(
      '--db <url>',
      'the store: memory:<name>, sqlite:<path> or postgres://... (default: AKD_DB, else sqlite:./akd.db; with --demo: sqlite:./akd-demo.db)',
    )
    .option(
      '--key-file <path>',
      'file holding the VRF secret key (default: AKD_VRF_KEY, else AKD_VRF_KEY_FILE, else ./akd.key; with --demo: ./akd-demo.key)',
    )
    .option('--port <n>', 'TCP port; 0 picks a free one', '8080')
    .option('--host <address>', 'address to listen on (0.0.0.0 for every interface)', '127.0.0.1')
    .option(
      '--publish-token-file <path>',
      'enable POST /v1/publish with the bearer token in this file (default: AKD_PUBLISH_TOKEN; without a token publishing is off)',
    )
    .option('--poll <ms>', 'how often a read-only server checks the store for new epochs', '1000')
    .option('--log-level <level>', `${LOG_LEVELS.join(', ')} (default: info; warn with --demo)`)
    .option(
      '--workers <n>',
      'proof server processes sharing the port (default: the available cores)',
    )
    .option(
      '--connection-spread',
      'give each proof server a limit of connections past which it stops accepting, so that a burst is spread (see the server README)',
    )
    .option(
      '--vrf-threads <n>',
      'worker threads for the VRF work of publishes, 0 for none (default: the available cores)',
    )
    .option(
      '--drain <ms>',
      'on SIGTERM, keep answering (readiness failing) this long before closing',
      '0',
    )
    .option(
      '--cache-mb <n>',
      `bound on each proof server's record cache, MiB (tree nodes counted as their bytes over SQLite and PostgreSQL; 0: no cache; default ${DEFAULT_PROOF_CACHE_BYTES / 1024 / 1024}, ${DEFAULT_MEMORY_PROOF_CACHE_BYTES / 1024 / 1024} over a memory store)`,
    )
    .option(
      '--audit-cache-mb <n>',
      `audit blobs each proof server keeps in memory for audits and blob downloads, MiB (0: none; default ${DEFAULT_AUDIT_BLOB_CACHE_BYTES / 1024 / 1024})`,
    )
    .option(
      '--sqlite-map-mb <n>',
      `how much of a SQLite store each proof server reads through a memory map, MiB: reads missing its page cache cost no copy, and the pages count in its resident size (0: none; default ${PROOF_SQLITE_MMAP_BYTES / 1024 / 1024})`,
    )
    .option(
      '--proof-heap-mb <n>',
      `each proof server's V8 heap limit, MiB, which also makes it collect garbage sooner (0: V8's own; default ${DEFAULT_PROOF_HEAP_MB})`,
    )
    .option(
      '--writer-sleep <ms>',
      'a memory store: the writer process, which holds a whole copy of the store, stops after this long without a publish and starts again for the next one (0: never)',
      String(DEFAULT_WRITER_SLEEP_MS),
    )
    .option(
      '--writer-recycle-mb <n>',
      'a SQLite or PostgreSQL store: once idle after a publish, a writer process holding more than this much memory (MiB) hands the writer lock over to a new one, which gives the memory back (0: never)',
      String(DEFAULT_WRITER_RECYCLE_MB),
    )
    .option(
      '--witness <key[@url]>',
      "a witness whose signatures GET /v1/epoch carries: its Ed25519 public key (hex) and, for one serving Plexi's API (akd audit witness), @URL to poll it; without a URL it pushes to POST /v1/witness-signatures (repeatable)",
      collect,
    )
    .option(
      '--witness-namespace <ns>',
      "the namespace the witnesses sign this directory's roots under",
    )
    .option('--demo', 'serve a demo directory, created on first use');
  cmd.addHelpText(
    'after',
    '\nExamples:\n' +
      '  $ akd serve --demo                          a demo directory on http://127.0.0.1:8080/\n' +
      '  $ akd serve --db sqlite:./akd.db            read-only: serves what akd publish writes\n' +
      '  $ AKD_PUBLISH_TOKEN=$(cat token) akd serve --db postgres://akd@db/akd --port 8080\n\n' +
      'It runs --workers proof server processes on one port and, with a publish token, one\n' +
      "writer process, the directory's writer: it holds the store's writer lock (akd publish\n" +
      'cannot run beside it) and does every publish, so lookups never wait for one. Without a\n' +
      'token it is read-only and polls the store for epochs published by another process.\n' +
      'Liveness: GET /livez; readiness: GET /readyz. Processes that exit are started again\n' +
      '(proof servers always); it exits 1 when the writer loses its lock for good (another\n' +
      'writer took it) or keeps crashing. Over a fenced store (akd fence) it serves proofs and\n' +
      'refuses publishes. It speaks plain HTTP on 127.0.0.1 by default: put a reverse proxy\n' +
      'that terminates TLS in front of it.\n' +
      'Logs are JSON lines on stdout (labels and keys are never logged); SIGINT or SIGTERM\n' +
      'stops it after in-flight requests finish.\n\n' +
      '--demo creates sqlite:./akd-demo.db and ./akd-demo.key on first use (a memory store\n' +
      'when the SQLite driver is not available): three epochs of sample users (alice, bob,\n' +
      'carol, ... and user-001@example.com to user-050@example.com).\n',
  );
  cmd.action(async (opts: ServeOptions) => {
    if (opts.logLevel !== undefined && !LOG_LEVELS.includes(opts.logLevel)) {
      throw new UsageError(
        `--log-level: expected one of ${LOG_LEVELS.join(', ')}, got ${quote(opts.logLevel)}`,
      );
    }
    parsePort(opts.port);
    parsePoll(opts.poll);
    parseWorkers(opts.workers);
    parseDrain(opts.drain);
    parseCacheMb(opts.cacheMb);
    parseAuditCacheMb(opts.auditCacheMb);
    parseSqliteMapMb(opts.sqliteMapMb);
    parseProofHeapMb(opts.proofHeapMb);
    parseWriterSleep(opts.writerSleep);
    parseWriterRecycleMb(opts.writerRecycleMb);
    const token = await publishToken(opts, io);
    // serving never initialises a store; without a writer it never migrates or creates one
    // either, so a mistyped --db leaves no empty SQLite file behind
    // a read-only server never reads the key: its proof servers serve stored VRF proofs
    const store =
      opts.demo === true
        ? await openDemo(opts, io)
        : token === undefined
          ? await openPublicStore(opts, io)
          : await openStore(opts, io, { create: true });
    try {
      await serve(store, opts, io, token);
    } finally {
      await store.db.close();
    }
  });
}
