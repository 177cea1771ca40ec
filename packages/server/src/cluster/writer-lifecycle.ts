/**
 * The writer's life under `akd serve`'s supervisor: which process is the writer, when it is
 * stopped on purpose and who comes next. Three ways a writer stops without being a failure:
 *
 * - a memory store's idle writer sleeps (its store lives on in a proof server's replica), and
 *   the next publish wakes it: a new writer process starts from a replica's snapshot;
 * - a SQLite or PostgreSQL writer that once held much memory is recycled: a successor starts,
 *   waits for the store's lock, and the old writer finishes and releases it;
 * - a fenced store ends publishing: every writer stops and none is started again.
 *
 * Any other exit is a crash: the supervisor restarts the writer after its backoff
 * (restart-policy.ts), and until then proof servers say publishing is unavailable. The unit
 * holds the state and decides; starting, stopping and telling proof servers are its hooks,
 * so each transition is testable without processes (writer-lifecycle.test.ts).
 */

import type { WriterView } from './messages.js';

/** What the unit needs of a child process. */
export interface WriterProcess {
  /** Set on exit. */
  exited: boolean;
  /** A writer stopped on purpose (set here): its exit is no failure. */
  sleeping: boolean;
  /** Asks the process to finish and exit. */
  stop(): void;
}

export interface WriterLifecycleHooks<C extends WriterProcess> {
  /** Starts a writer process; `handover` for a successor that waits for the lock. */
  start(handover: boolean): C;
  /** Tells the proof servers what the writer is now (its socket, or why there is none). */
  relay(view: WriterView): void;
  /** Whether the cluster is shutting down. */
  stopping(): boolean;
  /** Whether a proof server holds a replica the store lives on in (memory stores). */
  replicaAlive(): boolean;
  /** Logs an error line of the writer role. */
  logError(msg: string): void;
}

/** What an exited writer means. */
export type WriterExit =
  /** Nothing more to do: a successor, a sleeper or a fenced writer that ended as planned. */
  | { kind: 'done' }
  /** A crash: restart it after the backoff (the caller's restart policy decides). */
  | { kind: 'crashed' };

export class WriterLifecycle<C extends WriterProcess> {
  /** The writer publishes go to (or the one stopping, until it exits). */
  writer: C | undefined;
  /** A writer taking over from `writer` (SQLite or PostgreSQL), until the old one exits. */
  successor: C | undefined;
  /** A memory store's writer is stopped while idle (or stopping so); a publish wakes it. */
  asleep = false;
  /** Why the store is fenced, once the writer found it so: no writer is started again. */
  fenced: string | undefined;

  constructor(
    /** A memory store: the writer sleeps when idle, instead of being recycled. */
    private readonly memory: boolean,
    private readonly hooks: WriterLifecycleHooks<C>,
  ) {}

  /** Starts the first writer (or one after a crash's backoff): it becomes the writer. */
  start(): C {
    this.writer = this.hooks.start(false);
    return this.writer;
  }

  /** Whether a writer may start at all: not once the store is fenced or the cluster stops. */
  private get closed(): boolean {
    return this.hooks.stopping() || this.fenced !== undefined;
  }

  /** A memory store's writer idle for its sleep time: it stops, if its store lives on. */
  idle(child: C): void {
    if (!this.memory || this.closed || child !== this.writer || child.sleeping) return;
    if (!this.hooks.replicaAlive()) return;
    child.sleeping = true;
    this.asleep = true;
    this.hooks.relay({ socketPath: undefined, problem: undefined, asleep: true });
    child.stop();
  }

  /** A SQLite or PostgreSQL writer that held much memory once idle: a successor starts. */
  recycle(child: C): void {
    if (this.memory || this.closed || child !== this.writer || child.sleeping) return;
    if (this.successor !== undefined) return;
    this.successor = this.hooks.start(true);
  }

  /**
   * The successor is up and waits for the lock: the old writer finishes and releases it;
   * publishes meanwhile wait for the successor's socket.
   */
  lockWaiting(child: C): void {
    const old = this.writer;
    if (child !== this.successor || old === undefined || old.sleeping) return;
    old.sleeping = true;
    this.hooks.relay({ socketPath: undefined, problem: undefined, asleep: true });
    old.stop();
  }

  /** A publish came for a sleeping writer: it starts again (once the old one has exited). */
  wake(): void {
    if (!this.asleep || this.closed) return;
    this.asleep = false;
    if (this.writer === undefined) this.start();
  }

  /**
   * The writer found the store fenced: publishing is over. Every writer stops and none is
   * started again. @returns false when it was fenced already or the cluster is stopping.
   */
  fence(reason: string): boolean {
    if (this.fenced !== undefined || this.hooks.stopping()) return false;
    this.fenced = reason;
    this.asleep = false;
    this.hooks.relay({ socketPath: undefined, problem: reason, fenced: true });
    for (const w of [this.writer, this.successor]) {
      if (w === undefined || w.exited) continue;
      w.sleeping = true;
      w.stop();
    }
    return true;
  }

  /** What the exit (with `code`, or by `signal`) of writer process `child` means. */
  exited(child: C, code: number | null, signal: string | null): WriterExit {
    if (this.fenced !== undefined) {
      // the store is fenced: no writer is started again
      if (child === this.writer) this.writer = undefined;
      if (child === this.successor) this.successor = undefined;
      return { kind: 'done' };
    }
    if (child === this.successor) {
      // it did not take over: the running writer goes on, or (told to stop already) is
      // started again once it has exited
      this.successor = undefined;
      this.hooks.logError(`the new writer process exited before taking over (${code ?? signal})`);
      return { kind: 'done' };
    }
    if (child.sleeping && code === 0) {
      this.writer = this.successor;
      this.successor = undefined;
      // a publish came while it was stopping: it starts again
      if (this.writer === undefined && !this.asleep) this.start();
      return { kind: 'done' };
    }
    return { kind: 'crashed' };
  }

  /** A crashed writer will be started again after its backoff: until then, it is unavailable. */
  crashed(how: string): void {
    this.writer = undefined;
    // started again, awake
    this.asleep = false;
    this.hooks.relay({
      socketPath: undefined,
      problem: `the writer process exited (${how}); it is being started again`,
    });
  }
}
