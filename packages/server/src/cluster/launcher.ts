/**
 * The cluster launcher of `akd serve`: the primary process, which answers no requests. It
 * starts N proof servers (node:cluster workers sharing one listening port; stateless over the
 * store, so any of them answers any request) and, when publishing is on, one writer (a child
 * process of its own, holding the store's writer lock). It supervises them:
 *
 * - a proof server or writer that dies is started again after a backoff (restart-policy.ts:
 *   proof servers always, after 1 s doubling to 10 s; the writer after 1 s doubling to 30 s,
 *   and a writer that keeps dying, 6 times within a minute, stops the cluster with exit 1);
 *   every exit is logged, and this process never exits while the cluster runs;
 * - the writer's state (ready, lock lost and being taken again) is relayed to every proof
 *   server, which then refuses publishes with a 503 and reports not ready; a writer that lost
 *   its lock for good, or cannot start (another writer holds the store), stops the cluster
 *   with exit 1 and the reason;
 * - a writer that finds the store fenced (a fail-over's old primary) stops, and no other is
 *   started: the proof servers go on serving proofs, refuse publishes with 409
 *   `STORAGE_LOCKED` and report not ready, naming the fence (`onFenced` says it once);
 * - the writer listens on a socket in a private folder of this process (`akd-serve-<pid>-*`
 *   in the temporary directory), removed when the writer exits, however it ended, and with
 *   the cluster; such folders of primaries that are gone are removed at start;
 * - when the writer commits an epoch, every proof server is told to serve it, and the publish
 *   is answered only once they all do (or after 2 s);
 * - it keeps connections spread over the proof servers (connection-spread.ts): each has a
 *   limit of connections past which it stops accepting, and the primary keeps a copy of the
 *   listening socket (never accepting from it) to hand to those that start again;
 * - over a memory store, which lives in the children (each keeps a packed replica), it passes
 *   the writer's changes on to the proof servers, numbered, and gets a child that starts a
 *   snapshot of a running child's replica; it keeps no copy of the store itself;
 * - `close()` (SIGTERM) drains: proof servers report not ready, finish their requests and
 *   exit; the writer finishes the publish in progress (or, past the shutdown timeout, is
 *   killed: its uncommitted epoch is then simply not there) and releases the lock.
 *
 * Children log JSON lines on their stdout, which the primary passes on line by line.
 *
 * This file is the supervisor: it starts children, decides what each message and each exit
 * means for the cluster (restarts, the writer's sleep, hand-over and fence, stopping), and
 * delegates the rest to a unit each: cluster-child.ts (starting a child, and what it is given
 * to start with: its role, the configuration and the VRF key), epoch-barrier.ts (publishes
 * answered once the proof servers serve their epoch), replica-relay.ts (a memory store's
 * changes and snapshots), spread-keeper.ts (the listening socket and the accept orders) and
 * restart-policy.ts (backoff).
 */

import cluster from 'node:cluster';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AkdError } from '@akd-ts/core';
import type { MemoryDatabase } from '@akd-ts/storage';
import { sendStart, spawnChild, workerMain, type Child } from './cluster-child.js';
import { EpochBarrier } from './epoch-barrier.js';
import type { FromChild, Role, ServeConfig, WriterView } from './messages.js';
import { ReplicaRelay } from './replica-relay.js';
import { RestartPolicy } from './restart-policy.js';
import { SpreadKeeper } from './spread-keeper.js';
import { WriterLifecycle } from './writer-lifecycle.js';
import { proofHeapArgs } from './proof-heap.js';
import { PRIVATE_FOLDER_PREFIX, removeStaleFolders } from './stale-folders.js';

export interface ClusterOptions {
  config: ServeConfig;
  /**
   * The VRF secret key, for publishing (required with `config.publishToken`): copied and kept
   * while the cluster runs, and sent to the writer process alone over its IPC channel (never
   * on a command line or in the environment). Proof servers never get it: they serve the VRF
   * proofs the writer stored.
   */
  secretKey?: Uint8Array;
  /** Proof server processes (at least 1). */
  workers: number;
  /**
   * For a `memory:` store: the store as the cluster starts. Each child keeps a replica of it
   * (the first from a snapshot of this store, later ones from a snapshot of a running child's)
   * and follows the writer's changes (replication/); this process keeps none.
   */
  memory?: MemoryDatabase;
  /** Where children's log lines go (JSON, one per call, without the newline). */
  log: (line: string) => void;
  /** Where children's stderr goes (crash reports). */
  stderr?: (text: string) => void;
  /** How long `close` waits for children before killing them, ms (default 30,000). */
  shutdownTimeoutMs?: number;
  /**
   * Writer exits allowed within `restartWindowMs` before the cluster gives up (default 5,
   * 60 s). Proof servers are always started again (restart-policy.ts).
   */
  maxRestarts?: number;
  restartWindowMs?: number;
  /**
   * Called once when the writer finds the store fenced (a fail-over's old primary): publishing
   * is over on this cluster, which goes on serving proofs. `akd serve` says so on stderr.
   */
  onFenced?: (reason: string) => void;
  /**
   * Keep connections spread over the proof servers with per-server limits
   * (connection-spread.ts; default false: each proof server accepts whatever it is first to
   * take). Off by default: side by side on SQLite under eight concurrent audits, the limits
   * sent health probes and lookups to a proof server busy streaming audits (slowest /healthz
   * 7.7 s and 10 failed lookups, against 1.6 s and none without).
   */
  spreadConnections?: boolean;
  /** How long a publish's answer waits for the proof servers to serve its epoch (default 2 s). */
  epochAckMs?: number;
  /**
   * Each proof server's V8 old-space limit, MiB (default DEFAULT_PROOF_HEAP_MB, proof-heap.ts; 0:
   * V8's own). See proofHeapArgs. Applied over a memory store too: its replica keeps
   * records as bytes outside the heap (PackedMemoryDatabase).
   */
  proofHeapMb?: number;
}

export interface RunningCluster {
  /** `http://host:port` of the proof servers. */
  url: string;
  /** Stops the cluster gracefully; resolves to its exit code (0, or 1 after a fatal error). */
  close(): Promise<number>;
  /** Resolves to the exit code when the cluster stops, by `close` or by a fatal error. */
  done: Promise<number>;
  /** Why it stopped on its own, when it did. */
  fatal: () => string | undefined;
  /**
   * Why it stopped on its own, as an error: an AkdError when the reason carries a catalogue
   * code (`STORAGE_LOCKED`: the writer lost its lock for good).
   */
  error: () => Error | undefined;
  /** Why publishing is over for good (the store is fenced), when it is. */
  fenced: () => string | undefined;
}

/**
 * Starts the cluster and resolves once every proof server listens (and the writer, if any,
 * is ready).
 * @throws AkdError when a child cannot start (for example `STORAGE_LOCKED`: another writer)
 * @example
 * ```ts
 * const running = await startCluster({ config, secretKey, workers: 2, log: console.log });
 * process.once('SIGTERM', () => void running.close().then((code) => process.exit(code)));
 * ```
 */
export async function startCluster(options: ClusterOptions): Promise<RunningCluster> {
  const { config, log } = options;
  if (config.publishToken !== undefined && options.secretKey === undefined) {
    throw new TypeError('a cluster that publishes (config.publishToken) needs secretKey');
  }
  // kept for the cluster's life: a writer started again needs it (the caller may wipe its
  // copy); sent to the writer alone in its start (cluster-child.ts), wiped when the cluster stops
  const secretKey = options.secretKey?.slice();
  const stderr = options.stderr ?? ((text: string) => process.stderr.write(text));
  const workers = Math.max(1, Math.floor(options.workers));
  const policy = new RestartPolicy({
    proofServers: workers,
    ...(options.maxRestarts === undefined ? {} : { maxWriterRestarts: options.maxRestarts }),
    ...(options.restartWindowMs === undefined ? {} : { windowMs: options.restartWindowMs }),
  });
  const { exec, execArgv } = workerMain();
  // Proof servers accept connections themselves from the shared socket. With the primary's
  // round robin, each new connection is handed to a worker over IPC and the next waits for its
  // acknowledgement, which a worker busy with proofs gives only between turns of its event
  // loop: a burst of connections (or a health check's new connection) then waits for many
  // such turns. Accepting directly, an idle worker also picks up new connections first; one
  // holding more than its share stops accepting for a while (connection-spread.ts).
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  cluster.setupPrimary({
    exec,
    // a memory store's replica is packed: its records are in slabs outside the heap, and the
    // heap holds its index (about 70 MB for 224,000 labels)
    execArgv: [...execArgv, ...proofHeapArgs(options.proofHeapMb)],
    silent: true,
    serialization: 'advanced',
  });

  const children = new Set<Child>();
  let writerView: WriterView = { socketPath: undefined, problem: 'the writer is starting' };
  /** Children waiting for their backoff to end: cleared when the cluster stops. */
  const restartTimers = new Set<NodeJS.Timeout>();
  /** A log line of this process, in the children's form (pino's JSON, level 40 warn, 50 error). */
  const logLine = (level: number, role: Role, msg: string) =>
    log(JSON.stringify({ level, time: Date.now(), service: 'akd-server', role, msg }));
  let stopping = false;
  let fatal: string | undefined;
  let url: string | undefined;
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  let startup: { resolve: () => void; reject: (e: Error) => void } | undefined;
  let writerReady: (() => void) | undefined;
  let nextWriterId = 1;

  const proofs = () => [...children].filter((c) => c.role === 'proof' && !c.exited);
  const spread = new SpreadKeeper<Child>(options.spreadConnections === true, workers);
  const barrier = new EpochBarrier<Child>(options.epochAckMs ?? 2_000);
  const relayWriter = (view: WriterView) => {
    writerView = view;
    for (const p of proofs()) p.send({ type: 'writer', writer: view });
  };
  // which process is the writer, and when it stops on purpose (writer-lifecycle.ts)
  const memory = options.memory !== undefined;
  const writers = new WriterLifecycle<Child>(memory, {
    start: (handover) => start('writer', handover),
    relay: relayWriter,
    stopping: () => stopping,
    replicaAlive: () => proofs().some((p) => p.replicating),
    logError: (msg) => logLine(50, 'writer', msg),
  });

  /**
   * This process's private folder (mode 0700), for the writer's socket and snapshot files:
   * made on first use, removed when the cluster stops. Its name carries this process's pid,
   * so that a later cluster can tell it is stale once this process is gone.
   */
  let folder: string | undefined;
  const privatePath = (name: string) => {
    folder ??= mkdtempSync(join(tmpdir(), `${PRIVATE_FOLDER_PREFIX}${process.pid}-`));
    return join(folder, name);
  };
  // a memory store lives in the children, whose replicas follow the writer through here
  const relay =
    options.memory === undefined
      ? undefined
      : new ReplicaRelay({
          initial: options.memory,
          proofs,
          writer: () => writers.writer,
          snapshotPath: (id) => privatePath(`snapshot-${id}`),
          logLine,
          fail: (reason) => {
            fatal ??= reason;
            void stopAll(1);
          },
        });
  const startupDone = () => {
    if (startup !== undefined && spread.listeningCount >= workers && writerReady === undefined) {
      startup.resolve();
      startup = undefined;
    }
  };

  /** What a message from `child` means for the cluster. */
  const onMessage = (child: Child, message: FromChild, handle?: unknown) => {
    switch (message.type) {
      case 'hello': {
        const start = (snapshot?: { file: string; seq: number }) =>
          sendStart(child, {
            config,
            secretKey,
            writer: writerView,
            ...(snapshot === undefined ? {} : { snapshot }),
            socket: spread.socket,
          });
        if (relay === undefined) start();
        else relay.hello(child, start);
        break;
      }
      case 'changes':
        relay?.changes(child, message.changes);
        break;
      case 'snapshot':
        relay?.snapshotTaken(child, message.id, message.seq, message.error);
        break;
      case 'idle':
        writers.idle(child);
        break;
      case 'recycle':
        writers.recycle(child);
        break;
      case 'lock-waiting':
        writers.lockWaiting(child);
        break;
      case 'wake-writer':
        writers.wake();
        break;
      case 'listening':
        url ??= message.url;
        spread.listening(child);
        startupDone();
        break;
      case 'writer':
        // once fenced, the fence's view stays (a writer stopping meanwhile has nothing to add)
        if (writers.fenced !== undefined && message.writer.fenced !== true) break;
        relayWriter(message.writer);
        if (message.writer.problem === undefined) writerReady?.();
        break;
      case 'fenced':
        if (!writers.fence(message.reason)) break;
        logLine(
          50,
          'writer',
          `publishing is over on this server: ${message.reason}; proofs are still served, publishes are refused, and /readyz reports not ready`,
        );
        options.onFenced?.(message.reason);
        // a cluster starting on a fenced store starts without a writer
        writerReady?.();
        break;
      case 'published': {
        const announce = async () => barrier.announce(child, message.id, message.epoch, proofs());
        // after the changes that made the epoch
        if (relay === undefined) void announce();
        else relay.inOrder(announce);
        break;
      }
      case 'socket':
        spread.keepSocket(handle);
        break;
      case 'connections':
        spread.report(child, message.count);
        break;
      case 'accepting':
        spread.confirm(child, message.on, message.count);
        break;
      case 'epoch-seen':
        barrier.seen(child, message.id);
        break;
      case 'fatal':
        if (child.role === 'proof' && startup === undefined) {
          // a proof server that cannot start again (the store unreachable for a while): it
          // exits, and is started again after its backoff, like one that crashed
          logLine(50, 'proof', `a proof server could not start: ${message.message}`);
          break;
        }
        fatal ??= message.message;
        if (startup !== undefined) {
          startup.reject(asError(message.message));
          startup = undefined;
        }
        void stopAll(1);
        break;
    }
  };

  const start = (role: Role, handover = false): Child => {
    const child = spawnChild(role, handover, {
      exec,
      execArgv,
      ...(role === 'writer' ? { socketPath: privatePath(`writer-${nextWriterId++}.sock`) } : {}),
      log,
      stderr,
      logLine,
      onMessage,
      onExit,
    });
    children.add(child);
    return child;
  };

  /** What `child`'s exit means: a restart after its backoff, the next writer, or the end. */
  const onExit = (child: Child, code: number | null, signal: NodeJS.Signals | null) => {
    child.exited = true;
    children.delete(child);
    // a writer killed outright leaves its socket behind
    if (child.socketPath !== undefined) rmSync(child.socketPath, { force: true });
    for (const done of child.writing) done();
    relay?.gone(child);
    spread.gone(child, !stopping);
    barrier.gone(child);
    if (stopping) {
      if (children.size === 0) finish(fatal === undefined ? 0 : 1);
      return;
    }
    if (child.role === 'writer' && writers.exited(child, code, signal).kind === 'done') return;
    const how = signal !== null ? `signal ${signal}` : `code ${code}`;
    const next = policy.exited(child.role);
    const recent = `${next.recent} exit${next.recent === 1 ? '' : 's'} of the ${child.role === 'proof' ? 'proof servers' : 'writer'} within ${policy.windowMs / 1000} s`;
    if (!next.restart) {
      fatal ??= `the ${child.role} process keeps exiting (${next.recent} time${next.recent === 1 ? '' : 's'} within ${policy.windowMs / 1000} s; last: ${how})`;
      logLine(50, child.role, `the ${child.role} process exited (${how}); ${recent}: giving up`);
      void stopAll(1);
      return;
    }
    logLine(
      50,
      child.role,
      `the ${child.role} process exited (${how}); starting it again in ${next.delayMs / 1000} s (${recent})`,
    );
    if (child.role === 'writer') writers.crashed(how);
    // Not unref'd: between a child's exit and its restart, this timer may be all that keeps
    // this process alive (a read-only cluster of one proof server).
    const timer = setTimeout(() => {
      restartTimers.delete(timer);
      if (stopping) return;
      if (child.role === 'proof') start('proof');
      // a writer exited while fenced meanwhile is not started again
      else if (writers.fenced === undefined) writers.start();
    }, next.delayMs);
    restartTimers.add(timer);
  };

  const stopAll = async (code: number): Promise<number> => {
    if (!stopping) {
      stopping = true;
      void done.then(() => {
        secretKey?.fill(0);
        spread.close();
        if (folder !== undefined) rmSync(folder, { recursive: true, force: true });
      });
      barrier.settleAll();
      for (const timer of restartTimers) clearTimeout(timer);
      restartTimers.clear();
      for (const child of children) child.send({ type: 'stop' });
      if (children.size === 0) finish(code === 0 && fatal === undefined ? 0 : 1);
      const timer = setTimeout(() => {
        for (const child of children) child.process.kill('SIGKILL');
      }, options.shutdownTimeoutMs ?? 30_000);
      void done.then(() => clearTimeout(timer));
    }
    return done;
  };

  // folders of primaries that are gone (killed before they could remove them)
  void removeStaleFolders(tmpdir(), (path, why) =>
    logLine(40, 'writer', `removed ${path}, left by an earlier akd serve (${why})`),
  );
  try {
    // the writer and the proof servers start side by side; proof servers refuse publishes
    // until the writer reports ready
    const writerStarted =
      config.publishToken === undefined
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            writerReady = () => {
              writerReady = undefined;
              resolve();
            };
            writers.start();
          });
    await new Promise<void>((resolve, reject) => {
      startup = { resolve, reject };
      for (let i = 0; i < workers; i++) start('proof');
      void writerStarted.then(startupDone);
    });
  } catch (e) {
    await stopAll(1);
    throw e;
  }

  return {
    url: url!,
    close: () => stopAll(0),
    done,
    fatal: () => fatal,
    error: () => (fatal === undefined ? undefined : asError(fatal)),
    fenced: () => writers.fenced,
  };
}

/** A child's fatal message as an error, keeping its catalogue code when it starts with one. */
function asError(message: string): Error {
  const match = /^([A-Z]+_[A-Z_]+): ([\s\S]*)$/.exec(message);
  return match === null ? new Error(message) : new AkdError(match[1] as never, match[2]!);
}
