/**
 * A memory store's replication through the primary (launcher.ts). A memory store lives in
 * the children, each of which keeps a replica (packed); the primary keeps none. The writer's
 * changes pass through here, numbered in the order they come, to the proof servers; a child
 * that starts gets a snapshot of a running proof server's replica (or of the writer's, when
 * no proof server runs), in a file, and the changes after it. All of it runs in one queue, so
 * that a snapshot holds every change passed on before it.
 */

import { rmSync } from 'node:fs';
import type { MemoryDatabase } from '@akd-ts/storage';
import { readChanges } from '../replication/codec.js';
import { writeSnapshotFile } from '../replication/replica.js';
import type { Child } from './cluster-child.js';
import type { Role } from './messages.js';

/** A memory store's replica in a file, and the number of the last change it holds. */
export interface Snapshot {
  file: string;
  seq: number;
}

export interface ReplicaRelayOptions {
  /** The store as the cluster starts: the first children's snapshots are of it. */
  initial: MemoryDatabase;
  /** The proof servers running, and the writer (if any). */
  proofs: () => Child[];
  writer: () => Child | undefined;
  /** Where the snapshot numbered `id` is written (the primary's private folder). */
  snapshotPath: (id: number) => string;
  logLine: (level: number, role: Role, msg: string) => void;
  /** Replication failed (bytes no replica could apply, a snapshot not written): stop. */
  fail: (reason: string) => void;
  /** Writes `db` to `file` (default: replication/replica.ts's). */
  writeSnapshot?: (db: MemoryDatabase, file: string) => Promise<void>;
}

/**
 * @example
 * ```ts
 * const relay = new ReplicaRelay({ initial, proofs, writer, snapshotPath, logLine, fail });
 * relay.hello(child, (snapshot) => sendStart(child, { ..., snapshot }));
 * ```
 */
export class ReplicaRelay {
  /** The store as the cluster started, until its first change: for the first children. */
  #initial: MemoryDatabase | undefined;
  /** The number of the last change passed on. */
  #lastSeq = 0;
  #nextSnapshotId = 1;
  readonly #waits = new Map<
    number,
    { source: Child; resolve: (s: Snapshot) => void; reject: (e: Error) => void; file: string }
  >();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly o: ReplicaRelayOptions) {
    this.#initial = o.initial;
  }

  /** The number of the last change passed on. */
  get lastSeq(): number {
    return this.#lastSeq;
  }

  /** Runs `task` after every task queued before it; a task that fails stops the cluster. */
  inOrder(task: () => Promise<void>): void {
    this.#queue = this.#queue.then(task).catch((e: unknown) => {
      this.o.fail(`replicating the memory store failed: ${(e as Error).message}`);
    });
  }

  /**
   * A child said hello: once a snapshot for it is written, it replicates from there, and
   * `start` sends it its start with the snapshot.
   */
  hello(child: Child, start: (snapshot: Snapshot) => void): void {
    // in the queue: the snapshot holds every change passed on before it (and a writer's may
    // hold later ones, which are then not passed on to this child)
    this.inOrder(async () => {
      const snapshot = await this.#snapshotFor(child);
      if (child.exited) {
        rmSync(snapshot.file, { force: true });
        return;
      }
      child.replicating = true;
      child.seq = snapshot.seq;
      child.base = this.#lastSeq;
      child.snapshotFile = snapshot.file;
      start(snapshot);
    });
  }

  /** The writer `from` sent a change: numbered, and passed on to every replicating proof server. */
  changes(from: Child, changes: Uint8Array): void {
    this.inOrder(async () => {
      // checked here, so that bytes no replica could apply stop the cluster
      readChanges(changes);
      const seq = ++this.#lastSeq;
      this.#initial = undefined;
      const sent: Promise<void>[] = [];
      for (const p of this.o.proofs()) {
        if (p.replicating && p.seq < seq) {
          p.seq = seq;
          sent.push(p.sendWritten({ type: 'changes', changes, seq }));
        }
      }
      // The writer sends its next change once this one is in every proof server's channel:
      // this process then holds one change at a time instead of a whole epoch's (tens of MB
      // in small blocks, which the allocator kept once they were freed).
      await Promise.all(sent);
      from.send({ type: 'changes-relayed' });
    });
  }

  /** `child` answered the snapshot request `id` (holding change `seq`, or with an error). */
  snapshotTaken(child: Child, id: number, seq: number, error?: string): void {
    const wait = this.#waits.get(id);
    if (wait === undefined || wait.source !== child) return;
    this.#waits.delete(id);
    if (error !== undefined) {
      wait.reject(new Error(`the ${child.role} process: ${error}`));
      return;
    }
    // a writer counts the changes it made since it started
    wait.resolve({ file: wait.file, seq: child.role === 'writer' ? child.base + seq : seq });
  }

  /** `child` exited: its snapshot file goes, and snapshots asked of it are taken elsewhere. */
  gone(child: Child): void {
    if (child.snapshotFile !== undefined) rmSync(child.snapshotFile, { force: true });
    for (const [id, wait] of this.#waits) {
      if (wait.source !== child) continue;
      this.#waits.delete(id);
      rmSync(wait.file, { force: true });
      wait.reject(new Error(`the ${child.role} process exited`));
    }
  }

  #ask(source: Child): Promise<Snapshot> {
    return new Promise<Snapshot>((resolve, reject) => {
      const id = this.#nextSnapshotId++;
      const file = this.o.snapshotPath(id);
      this.#waits.set(id, { source, resolve, reject, file });
      source.send({ type: 'snapshot-request', id, path: file });
    });
  }

  async #snapshotFor(target: Child): Promise<Snapshot> {
    for (;;) {
      if (this.#initial !== undefined) {
        const file = this.o.snapshotPath(this.#nextSnapshotId++);
        await (this.o.writeSnapshot ?? writeSnapshotFile)(this.#initial, file);
        return { file, seq: 0 };
      }
      const holds = (c: Child | undefined) => c !== undefined && c !== target && c.replicating;
      const writer = this.o.writer();
      const source = this.o.proofs().find(holds) ?? (holds(writer) ? writer : undefined);
      if (source === undefined) {
        throw new Error('the processes that held the memory store are all gone, and it with them');
      }
      try {
        const taken = await this.#ask(source);
        this.o.logLine(
          40,
          target.role,
          `the ${target.role} process starts from a snapshot of a running ${source.role === 'writer' ? "writer's" : "proof server's"} replica of the memory store (change ${taken.seq})`,
        );
        return taken;
      } catch (e) {
        // the source exited before it answered, or could not write the file: another one
        this.o.logLine(
          40,
          target.role,
          `a snapshot of the memory store was not taken: ${(e as Error).message}`,
        );
      }
    }
  }
}
