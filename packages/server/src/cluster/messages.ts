/**
 * What the processes of `akd serve` tell each other over their IPC channels (Node's
 * 'advanced' serialization, so bytes travel as bytes). The primary supervises: it starts the
 * writer and the proof servers, relays the writer's state to the proof servers, and holds a
 * publish's answer until every proof server serves its epoch.
 */

import type { HttpTimeouts, ServerLimits } from '../options.js';

/** Everything a child needs to serve, besides the VRF key. */
/** Witnesses as configuration crosses to a child: keys in hex. */
export interface WitnessesConfig {
  namespace: string;
  witnesses: { publicKey: string; url?: string }[];
}

export interface ServeConfig {
  /**
   * `sqlite:<path>` or `postgres://...`; or `memory:...`, a store that each child keeps a
   * replica of (a snapshot at start, then the writer's changes).
   */
  storeUrl: string;
  configuration: string;
  domainLabel?: string;
  /** The directory's VRF public key (hex): proof servers serve with it and stored proofs. */
  publicKey: string;
  port: number;
  host: string;
  /** Enables POST /v1/publish through the writer. */
  publishToken?: string;
  /**
   * Witnesses whose signatures `GET /v1/epoch` carries (witness/relay.ts): each proof server
   * polls those with a URL itself; a pushed signature stays with the process that took it.
   */
  witnesses?: WitnessesConfig;
  /** How often proof servers check the store for epochs published elsewhere, ms. */
  pollMs: number;
  logLevel: string;
  /** Worker threads for the writer's VRF work (undefined: the available cores). */
  vrfThreads?: number;
  /** The writer's CPU priority (nice, 0 to 19; default 10), below the proof servers'. */
  writerNice?: number;
  limits?: Partial<ServerLimits>;
  http?: Partial<HttpTimeouts>;
  /** How long a stopping proof server keeps answering after it reports not ready, ms. */
  drainMs?: number;
  /**
   * A memory store: the writer process stops after this long without a publish (it holds a
   * whole copy of the store), and the next publish starts it again from a snapshot of a proof
   * server's replica; 0 keeps it running. Default {@link DEFAULT_WRITER_SLEEP_MS}.
   */
  writerSleepMs?: number;
  /**
   * A SQLite or PostgreSQL store: a writer still holding more than this many MiB of resident
   * memory once idle after a publish hands over to a new writer process, which gives the
   * memory back; 0 never. Default {@link DEFAULT_WRITER_RECYCLE_MB}.
   */
  writerRecycleMb?: number;
  /**
   * Bound on each proof server's record cache, bytes as the cache counts them: over a SQL
   * store the tree nodes' own bytes (`proofCache`), over a memory store spec 14.3's
   * accounting. Default {@link DEFAULT_PROOF_CACHE_BYTES}, or
   * {@link DEFAULT_MEMORY_PROOF_CACHE_BYTES} over a memory store; 0 turns the cache off
   * (every read goes to the store).
   */
  cacheBytes?: number;
  /**
   * Bound on each proof server's audit blob cache, bytes (default 64 MiB,
   * `DEFAULT_AUDIT_BLOB_CACHE_BYTES`); 0 turns it off.
   */
  auditCacheBytes?: number;
  /**
   * Bytes of a SQLite store each proof server reads through a memory map (default
   * `PROOF_SQLITE_MMAP_BYTES`, 2 GiB); 0 maps nothing.
   */
  sqliteMapBytes?: number;
}

/**
 * The default bound on a proof server's record cache over a SQL store: 44 MiB of tree nodes
 * kept as bytes (`proofCache`), about 144,000 records in about 77 MiB of memory. Random
 * lookups over a large directory would otherwise cache every node they touch within the
 * cache's 30 s lifetime (hundreds of MB per process); the nodes near the root, which every
 * lookup reads, stay cached either way, and the more levels below them fit, the fewer
 * queries a lookup makes. The bound was 16 MiB of records as objects (spec 14.3's
 * accounting: 40,500 records in 71 MiB). On a 100,000-label SQLite store a warm lookup then
 * made 7.8 batched node reads, and 5.0 with these, answering 1.25-1.30 times as many lookups
 * a second (bench/RESULTS.md, "proof servers' caches keep nodes as bytes").
 */
export const DEFAULT_PROOF_CACHE_BYTES = 44 * 1024 * 1024;

/**
 * A proof server's SQLite page cache, KiB. Lookups read a few pages per tree level at random
 * over the whole file, which the operating system's page cache holds anyway; a quarter of the
 * driver's 64 MiB keeps the pages near the root (read by every lookup) and leaves each process
 * 48 MiB lighter. The writer keeps the driver's default for its commits.
 */
export const PROOF_SQLITE_CACHE_KIB = 16 * 1024;

/**
 * How much of a SQLite store a proof server maps into memory for its reads: up to SQLite's
 * limit (2 GB in this build; it caps what is asked). A page the small cache above misses is then
 * read from the map rather than copied through a system call, which made lookups on a
 * 100,000-label store 8-13% faster. The pages are the file system's cache, shared by every
 * proof server on the host; the writer maps nothing, so its resident size stays its own.
 * `akd serve --sqlite-map-mb` changes it (`ServeConfig.sqliteMapBytes`).
 */
export const PROOF_SQLITE_MMAP_BYTES = 2 ** 31;

/**
 * The default bound over a memory store: 4 MiB. A record missing from the cache is then read
 * from the replica in the same process (a hash probe and a decode, microseconds, against a
 * query for SQLite), so a cache that holds the nodes near the root is enough; the rest would
 * be objects kept twice, as bytes in the replica and as objects in the cache.
 */
export const DEFAULT_MEMORY_PROOF_CACHE_BYTES = 4 * 1024 * 1024;

/**
 * How long a memory store's writer waits for a publish before it stops, ms. A publish that
 * wakes it waits about as long as the writer takes to start and load the store (2-4 s for
 * 224,000 labels).
 */
export const DEFAULT_WRITER_SLEEP_MS = 10_000;

/**
 * A writer holding more than this once idle hands over to a new process, MiB. A fresh writer
 * holds about 130 MB; one that published 224,000 labels in epochs of 28,000 kept 670-760 MB
 * after collecting its heap: blocks the allocator keeps once freed, which only the end of the
 * process gives back.
 */
export const DEFAULT_WRITER_RECYCLE_MB = 384;

export type Role = 'proof' | 'writer';

/** Primary -> child. */
export type ToChild =
  | {
      type: 'start';
      role: Role;
      config: ServeConfig;
      /** The VRF secret key: sent to the writer alone (proof servers serve stored proofs). */
      secretKey?: Uint8Array;
      /** The writer's state when a proof server starts. */
      writer?: WriterView;
      /**
       * A memory store: the file holding the snapshot to start from (see replication/),
       * which the child removes once read.
       */
      snapshotFile?: string;
      /** The number of the last change the snapshot holds (a memory store). */
      seq?: number;
      /** A proof server listens on the listening socket sent with this message. */
      socket?: boolean;
      /**
       * A writer that takes over from this server's previous writer: it waits for the store's
       * writer lock instead of failing on it.
       */
      handover?: boolean;
      /**
       * The writer's socket, in a private folder the primary made and removes (the writer
       * listens there; the primary removes it once the writer exits, however it ended).
       */
      socketPath?: string;
    }
  | { type: 'writer'; writer: WriterView }
  | { type: 'epoch'; id: number; epoch: string }
  /** A memory store's change, as the writer made it, numbered by the primary (replication/). */
  | { type: 'changes'; changes: Uint8Array; seq: number }
  /** A memory store's writer: its last change is passed on, it may send the next. */
  | { type: 'changes-relayed' }
  /** A memory store: write a snapshot of your replica to the new file `path`. */
  | { type: 'snapshot-request'; id: number; path: string }
  | { type: 'epoch-acked'; id: number }
  /**
   * A proof server's limit of connections and, with `start`, an order to accept again, sent
   * with a copy of the listening socket (cluster/connection-spread.ts).
   */
  | { type: 'accept'; start: boolean; limit: number }
  | { type: 'stop' };

/** Child -> primary. */
export type FromChild =
  /** Sent once the child listens for messages: only then can it be sent 'start'. */
  | { type: 'hello' }
  | { type: 'listening'; url: string }
  | { type: 'writer'; writer: WriterView }
  | { type: 'published'; id: number; epoch: string }
  | { type: 'changes'; changes: Uint8Array }
  /**
   * A memory store's replica, written as asked (or `error`: why not): `seq` is the number of
   * the last change it holds (a proof server), or how many changes this writer has sent (the
   * writer).
   */
  | { type: 'snapshot'; id: number; seq: number; error?: string }
  /** A memory store's writer, idle for its sleep time: it may be stopped. */
  | { type: 'idle' }
  /** A writer idle with much memory: start a new one to take over (a SQLite or PostgreSQL store). */
  | { type: 'recycle' }
  /** A writer taking over is up and waits for the lock: the previous one may stop. */
  | { type: 'lock-waiting' }
  /** A proof server has a publish for the writer, which is asleep. */
  | { type: 'wake-writer' }
  | { type: 'epoch-seen'; id: number }
  /** A proof server's open connections, when the count changed. */
  | { type: 'connections'; count: number }
  /** A proof server accepts new connections (true, after a start) or stopped, and its count. */
  | { type: 'accepting'; on: boolean; count: number }
  /** Sent with a copy of the listening socket, for the primary to keep (the first one listening). */
  | { type: 'socket' }
  /**
   * The writer found the store fenced (a fail-over's old primary, `akd fence`): no writer may
   * publish there any more. It stops; the primary starts no other, and the proof servers go
   * on serving proofs with publishing refused.
   */
  | { type: 'fenced'; reason: string }
  | { type: 'fatal'; message: string };

/** The writer as proof servers see it. */
export interface WriterView {
  socketPath: string | undefined;
  /** Why it cannot publish, or undefined when it can. */
  problem: string | undefined;
  /**
   * A memory store's writer stopped while idle (`writerSleepMs`): no process, no problem; a
   * publish asks the primary to start it again and waits for its socket.
   */
  asleep?: boolean;
  /**
   * The store is fenced: publishing is over for good on this server, and publishes are
   * refused with `STORAGE_LOCKED` (and `problem`, the fence's reason) rather than "retry".
   */
  fenced?: boolean;
}
