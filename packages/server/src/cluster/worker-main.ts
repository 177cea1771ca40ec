/**
 * The entry of every child process of `akd serve` (forked by launcher.ts): waits for its
 * start message, opens its store connection and runs its role, a proof server or the writer,
 * then follows the primary's messages until told to stop. Signals are the primary's to handle:
 * a child ignores SIGINT and SIGTERM (a Ctrl-C reaches the whole process group) and stops when
 * the primary says so, or when the primary is gone (its IPC channel closes).
 */

import { createLogger } from '../logging.js';
import {
  PROOF_SQLITE_CACHE_KIB,
  PROOF_SQLITE_MMAP_BYTES,
  type FromChild,
  type Role,
  type ToChild,
  type WriterView,
} from './messages.js';
import { startProofRole, type ProofRole } from './proof-role.js';
import {
  RecordingDatabase,
  applyChanges,
  readSnapshotFile,
  replicaOf,
  writeSnapshotFile,
} from '../replication/replica.js';
import type { Database, PackedMemoryDatabase } from '@akd-ts/storage';
import { openStoreUrl } from './store-url.js';
import { startWriterRole, type WriterRole } from './writer-role.js';

const send = (message: FromChild, handle?: unknown) => process.send?.(message, handle as never);

/**
 * A memory store's writer sends its changes one at a time, each once the primary passed the
 * last one on, and its epochs in order with them (an epoch is announced after its changes).
 */
const outbox: FromChild[] = [];
let relaying = false;
const sendInOrder = (message: FromChild) => {
  outbox.push(message);
  pump();
};
const pump = () => {
  while (!relaying && outbox.length > 0) {
    const message = outbox.shift()!;
    send(message);
    relaying = message.type === 'changes';
  }
};

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => {});

let role: ProofRole | WriterRole | undefined;
let roleName: Role | undefined;
/** A memory store's replica (proof servers apply the writer's changes to it). */
let replicated: PackedMemoryDatabase | undefined;
/**
 * A proof server's replica: the number of the last change it holds. The writer's: how many
 * changes it has made. Snapshots sent to the primary carry it.
 */
let seq = 0;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Changes and epochs are handled in the order they came. */
let inOrder: Promise<unknown> = Promise.resolve();
const then = (task: () => Promise<unknown>) => {
  inOrder = inOrder.then(task).catch(() => undefined);
};
let stopping: Promise<void> | undefined;
const stop = (code: number) =>
  (stopping ??= (async () => {
    try {
      await role?.stop();
    } finally {
      process.exit(code);
    }
  })());
process.on('disconnect', () => void stop(0));

/** The writer's state as last relayed (it can come while the proof server is starting). */
let latestWriter: WriterView | undefined;

/** Epoch barriers the writer waits on, by id. */
const waiting = new Map<number, () => void>();
let nextId = 1;

async function start(message: Extract<ToChild, { type: 'start' }>, socket: unknown): Promise<void> {
  const { config } = message;
  const secretKey = message.secretKey;
  roleName = message.role;
  const logger = createLogger({ level: config.logLevel });
  let db: Database;
  if (config.storeUrl.startsWith('memory:')) {
    const replica =
      message.snapshotFile === undefined
        ? await replicaOf(new Uint8Array(0))
        : await readSnapshotFile(message.snapshotFile);
    replicated = replica;
    seq = message.role === 'writer' ? 0 : (message.seq ?? 0);
    db =
      message.role === 'writer'
        ? new RecordingDatabase(replica, (changes) => {
            seq++;
            sendInOrder({ type: 'changes', changes });
          })
        : replica;
  } else {
    db = await openStoreUrl(
      config.storeUrl,
      // a proof server streams audits: their blobs are read off its event loop
      message.role === 'proof'
        ? {
            sqliteCacheKiB: PROOF_SQLITE_CACHE_KIB,
            sqliteMmapBytes: config.sqliteMapBytes ?? PROOF_SQLITE_MMAP_BYTES,
            sqliteBlobThread: true,
          }
        : {},
    );
  }
  try {
    if (message.role === 'writer') {
      if (secretKey === undefined) throw new TypeError('the writer process needs the VRF key');
      role = await startWriterRole({
        config,
        secretKey,
        db,
        logger,
        send,
        waitForEpoch: (epoch) =>
          new Promise((resolve) => {
            const id = nextId++;
            waiting.set(id, resolve);
            sendInOrder({ type: 'published', id, epoch });
          }),
        handover: message.handover === true,
        socketPath: message.socketPath!,
      });
    } else {
      const proof = await startProofRole({
        config,
        db,
        logger,
        writer: latestWriter,
        send,
        socket,
      });
      role = proof;
      // the writer's state may have changed while the proof server started
      if (latestWriter !== undefined) proof.setWriter(latestWriter);
      send({ type: 'listening', url: proof.url });
    }
  } catch (e) {
    await db.close().catch(() => undefined);
    throw e;
  } finally {
    secretKey?.fill(0);
  }
}

process.on('message', (message: ToChild, handle: unknown) => {
  switch (message.type) {
    case 'start':
      // the start message carries the newest state (any earlier relay is older)
      latestWriter = message.writer ?? latestWriter;
      // in order: a memory store's changes sent after the snapshot wait for its replica
      then(() =>
        start(message, message.socket === true ? handle : undefined).catch((e: unknown) => {
          const code = (e as { code?: unknown }).code;
          send({
            type: 'fatal',
            message: `${typeof code === 'string' ? `${code}: ` : ''}${e instanceof Error ? e.message : String(e)}`,
          });
          void stop(1);
        }),
      );
      break;
    case 'writer':
      latestWriter = message.writer;
      (role as ProofRole | undefined)?.setWriter(message.writer);
      break;
    case 'accept':
      (role as ProofRole | undefined)?.accept(message.limit, message.start ? handle : undefined);
      break;
    case 'changes':
      then(async () => {
        try {
          // one change a turn: a publish's changes come in a burst, and requests go on
          await nextTurn();
          await applyChanges(replicated!, message.changes);
          seq = message.seq;
        } catch (e) {
          // a replica that missed a change would serve a store that is not the writer's:
          // this process stops, and the primary starts it again from a fresh snapshot
          process.stderr.write(`a memory store change could not be applied: ${String(e)}\n`);
          process.exit(1);
        }
      });
      break;
    case 'snapshot-request':
      // after the changes that came before the request: the snapshot holds them all
      then(async () => {
        if (replicated === undefined) return;
        try {
          // A proof server lets requests run between pieces: its replica is only written by
          // changes, which wait behind this task. The writer writes it in one go: its
          // publishes write the store outside this queue.
          await writeSnapshotFile(
            replicated,
            message.path,
            roleName === 'proof' ? nextTurn : undefined,
          );
          send({ type: 'snapshot', id: message.id, seq });
        } catch (e) {
          send({ type: 'snapshot', id: message.id, seq, error: String(e) });
        }
      });
      break;
    case 'epoch':
      then(async () => {
        try {
          await (role as ProofRole | undefined)?.refresh();
        } finally {
          send({ type: 'epoch-seen', id: message.id });
        }
      });
      break;
    case 'changes-relayed':
      relaying = false;
      pump();
      break;
    case 'epoch-acked':
      waiting.get(message.id)?.();
      waiting.delete(message.id);
      break;
    case 'stop':
      void stop(0);
      break;
  }
});
// a message sent before this module ran would have found no listener
send({ type: 'hello' });
