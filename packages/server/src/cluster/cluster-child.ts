/**
 * The cluster's children as the primary sees them (launcher.ts): starting a proof server
 * (a node:cluster worker) or a writer (a child process of its own), what each is sent when
 * it says hello, and sending to it. Everything a child is given to start with is here: its
 * role in the environment (AKD_SERVE_ROLE), and over its IPC channel the configuration and,
 * for the writer alone, the VRF secret key (never on a command line or in the environment:
 * no child inherits the variables that hold or name it). Proof servers serve the VRF proofs
 * the writer stored.
 */

import cluster from 'node:cluster';
import { fork, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { FromChild, Role, ServeConfig, ToChild, WriterView } from './messages.js';

/** A child, whichever way it was started. */
export interface Child {
  role: Role;
  process: ChildProcess;
  /** Sends `message`, with a handle (a listening socket) when given. */
  send(message: ToChild, handle?: unknown): void;
  /** Asks the child to finish what it does and exit (`{ type: 'stop' }`). */
  stop(): void;
  /**
   * Sends `message` and resolves once it is written to the child's channel (or the child is
   * gone): what the channel cannot take yet waits in this process's memory.
   */
  sendWritten(message: ToChild): Promise<void>;
  /** What `sendWritten` waits for, all resolved on exit. */
  writing: Set<() => void>;
  /** Set on exit. */
  exited: boolean;
  /** A memory store's replica is being sent changes (from its snapshot on). */
  replicating: boolean;
  /** A memory store: the number of the last change this child's replica holds or was sent. */
  seq: number;
  /** A memory store's writer: the number of the last change before its own first one. */
  base: number;
  /** A memory store: the snapshot file it was given (it removes it once read). */
  snapshotFile?: string;
  /**
   * A writer stopped on purpose: a memory store's while idle, or one that a new writer took
   * over from (no restart, no problem).
   */
  sleeping: boolean;
  /** A writer that takes over from the running one (it waits for the lock). */
  handover: boolean;
  /** A writer's socket, removed when it exits. */
  socketPath?: string;
}

/** The child entry, from sources (tests, under tsx) or from dist/. */
export function workerMain(): { exec: string; execArgv: string[] } {
  const here = import.meta.url;
  const fromSource = here.endsWith('.ts');
  const exec = fileURLToPath(new URL(`./worker-main.${fromSource ? 'ts' : 'js'}`, here));
  return {
    exec,
    execArgv: fromSource ? ['--conditions=source', '--import', import.meta.resolve('tsx')] : [],
  };
}

export interface SpawnOptions {
  exec: string;
  execArgv: string[];
  /** A writer: where it listens (removed when it exits). */
  socketPath?: string;
  /** Where its log lines (stdout) and crash reports (stderr) go. */
  log: (line: string) => void;
  stderr: (text: string) => void;
  /** A line of this process's own log about the child. */
  logLine: (level: number, role: Role, msg: string) => void;
  onMessage: (child: Child, message: FromChild, handle?: unknown) => void;
  onExit: (child: Child, code: number | null, signal: NodeJS.Signals | null) => void;
}

/**
 * The node flags of a writer process, as the `akd` command's shim gives them: `gc` exposed,
 * and no allocation-site pretenuring, whose decisions made a large commit's old generation
 * grow by 350-400 MB between full collections in some runs (bench/RESULTS.md, "Writer
 * memory").
 */
export const WRITER_NODE_FLAGS = ['--expose-gc', '--no-allocation-site-pretenuring'];

/**
 * Starts a child of `role`: a proof server as a node:cluster worker (cluster.setupPrimary
 * set its entry), a writer as a process of its own.
 */
export function spawnChild(role: Role, handover: boolean, options: SpawnOptions): Child {
  const env = childEnv(role);
  const worker = role === 'proof' ? cluster.fork(env) : undefined;
  const proc =
    worker?.process ??
    fork(options.exec, [], {
      // the writer collects its heap once idle after publishes (writer-role.ts) and around a
      // large epoch's commit; without pretenuring, the commit's short-lived records stay out
      // of the old generation (WRITER_NODE_FLAGS)
      execArgv: [...options.execArgv, ...WRITER_NODE_FLAGS],
      silent: true,
      serialization: 'advanced',
      env: { ...process.env, ...env },
    });
  const child: Child = {
    role,
    process: proc,
    send: (message, handle) => {
      if (child.exited || !proc.connected) return;
      if (worker !== undefined) worker.send(message, handle as never);
      else proc.send(message, handle as never);
    },
    stop: () => child.send({ type: 'stop' }),
    sendWritten: (message) =>
      new Promise<void>((resolve) => {
        if (child.exited || !proc.connected) return resolve();
        const done = () => {
          child.writing.delete(done);
          resolve();
        };
        // resolved on exit too (the launcher's onExit)
        child.writing.add(done);
        proc.send(message, undefined, {}, done);
      }),
    writing: new Set(),
    exited: false,
    replicating: false,
    seq: 0,
    base: 0,
    sleeping: false,
    handover,
    ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath }),
  };
  lines(proc.stdout, options.log);
  proc.stderr?.on('data', (d: Buffer) => options.stderr(String(d)));
  // A message sent as the child exits (its channel just closed) fails with EPIPE on this
  // side, as an 'error' event that would otherwise end this process: the child's exit is
  // handled by onExit. Anything else is reported.
  const channelError = (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE' || e.code === 'ERR_IPC_CHANNEL_CLOSED') return;
    options.logLine(50, role, `the ${role} process's channel failed: ${e.message}`);
  };
  proc.on('error', channelError);
  worker?.on('error', channelError);
  (worker ?? proc).on('message', (m: FromChild, handle?: unknown) =>
    options.onMessage(child, m, handle),
  );
  proc.once('exit', (code, signal) => options.onExit(child, code, signal));
  return child;
}

/** What a child is told to start with, besides its role. */
export interface StartWith {
  config: ServeConfig;
  /** The VRF secret key, sent to the writer alone (absent for a server that never publishes). */
  secretKey: Uint8Array | undefined;
  /** A proof server: the writer's state as it starts. */
  writer: WriterView;
  /** A memory store: the snapshot file its replica starts from, and the change it holds. */
  snapshot?: { file: string; seq: number };
  /** A proof server started once the primary keeps the listening socket: it gets a copy. */
  socket: unknown;
}

/**
 * Sends `child` its start: the configuration and the key, its part, and for a proof server
 * the writer's state and a copy of the listening socket when the primary keeps one.
 */
export function sendStart(child: Child, w: StartWith): void {
  const copy = child.role === 'proof' ? w.socket : undefined;
  child.send(
    {
      type: 'start',
      role: child.role,
      config: w.config,
      // the writer alone holds the key; proof servers serve stored VRF proofs
      ...(child.role === 'writer' && w.secretKey !== undefined ? { secretKey: w.secretKey } : {}),
      ...(child.role === 'proof' ? { writer: w.writer } : {}),
      ...(w.snapshot === undefined ? {} : { snapshotFile: w.snapshot.file, seq: w.snapshot.seq }),
      ...(copy === undefined ? {} : { socket: true }),
      ...(child.handover ? { handover: true } : {}),
      ...(child.socketPath === undefined ? {} : { socketPath: child.socketPath }),
    },
    copy,
  );
}

/**
 * Environment variables that hold the VRF secret or name its file. No child inherits them:
 * proof servers never see the key, and the writer gets it over its IPC channel.
 */
export const KEY_VARIABLES: readonly string[] = ['AKD_VRF_KEY', 'AKD_VRF_KEY_FILE'];

/** What a child's environment adds to (or, undefined, removes from) this process's. */
function childEnv(role: Role): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { AKD_SERVE_ROLE: role };
  for (const name of KEY_VARIABLES) env[name] = undefined;
  return env;
}

function lines(stream: Readable | null, sink: (line: string) => void): void {
  if (stream === null) return;
  createInterface({ input: stream, crlfDelay: Infinity }).on('line', sink);
}
