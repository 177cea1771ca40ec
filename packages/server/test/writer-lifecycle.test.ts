// The writer's life under akd serve's supervisor, without processes: a memory store's writer
// sleeps and wakes, a SQLite or PostgreSQL writer hands over to a successor, a fence ends
// publishing, and any other exit is a crash to restart.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { WriterView } from '../src/cluster/messages.js';
import { WriterLifecycle, type WriterProcess } from '../src/cluster/writer-lifecycle.js';

interface Fake extends WriterProcess {
  id: number;
  handover: boolean;
  stops: number;
}

function setup(memory: boolean) {
  const started: Fake[] = [];
  const views: WriterView[] = [];
  const errors: string[] = [];
  const state = { stopping: false, replica: true };
  const writers = new WriterLifecycle<Fake>(memory, {
    start: (handover) => {
      const child: Fake = {
        id: started.length + 1,
        handover,
        exited: false,
        sleeping: false,
        stops: 0,
        stop() {
          this.stops++;
        },
      };
      started.push(child);
      return child;
    },
    relay: (view) => views.push(view),
    stopping: () => state.stopping,
    replicaAlive: () => state.replica,
    logError: (msg) => errors.push(msg),
  });
  /** The process exits (its exit code, or null for a signal). */
  const exit = (child: Fake, code: number | null, signal: string | null = null) => {
    child.exited = true;
    return writers.exited(child, code, signal).kind;
  };
  return { writers, started, views, errors, state, exit };
}

test("a memory store's idle writer sleeps while a replica holds the store, and a publish wakes it", () => {
  const { writers, started, views, state, exit } = setup(true);
  const first = writers.start();
  assert.equal(writers.writer, first);
  // no replica to keep the store: it stays awake
  state.replica = false;
  writers.idle(first);
  assert.equal(first.stops, 0);
  state.replica = true;
  writers.idle(first);
  assert.equal(first.stops, 1);
  assert.equal(writers.asleep, true);
  assert.deepEqual(views.at(-1), { socketPath: undefined, problem: undefined, asleep: true });
  writers.idle(first); // told once
  assert.equal(first.stops, 1);
  // it exits as asked: nothing starts until a publish wakes it
  assert.equal(exit(first, 0), 'done');
  assert.equal(writers.writer, undefined);
  assert.equal(started.length, 1);
  writers.wake();
  assert.equal(started.length, 2);
  assert.equal(writers.writer, started[1]);
  assert.equal(writers.asleep, false);
  writers.wake(); // awake already
  assert.equal(started.length, 2);
});

test('a publish that comes while the sleeping writer is still stopping starts it once it exited', () => {
  const { writers, started, exit } = setup(true);
  const first = writers.start();
  writers.idle(first);
  writers.wake(); // the old process has not exited yet
  assert.equal(started.length, 1);
  assert.equal(exit(first, 0), 'done');
  assert.equal(started.length, 2);
  assert.equal(writers.writer, started[1]);
});

test('only the current writer of a memory store sleeps, and never while stopping or fenced', () => {
  const { writers, state } = setup(true);
  const first = writers.start();
  const other: Fake = { ...first, id: 99, stops: 0, stop: () => assert.fail('not the writer') };
  writers.idle(other);
  state.stopping = true;
  writers.idle(first);
  assert.equal(first.stops, 0);
  state.stopping = false;
  writers.fence('fenced');
  assert.equal(first.stops, 1); // the fence stopped it, not idleness
  writers.idle(first);
  assert.equal(first.stops, 1);
});

test('a recycled writer hands over: the successor waits for the lock, then the old one stops', () => {
  const { writers, started, views, exit } = setup(false);
  const old = writers.start();
  writers.recycle(old);
  const next = started[1]!;
  assert.equal(next.handover, true);
  assert.equal(writers.successor, next);
  writers.recycle(old); // one successor at a time
  assert.equal(started.length, 2);
  // the old one is told to stop only once the successor waits for the lock
  assert.equal(old.stops, 0);
  writers.lockWaiting(old); // from the wrong process: ignored
  assert.equal(old.stops, 0);
  writers.lockWaiting(next);
  assert.equal(old.stops, 1);
  assert.deepEqual(views.at(-1), { socketPath: undefined, problem: undefined, asleep: true });
  assert.equal(exit(old, 0), 'done');
  assert.equal(writers.writer, next);
  assert.equal(writers.successor, undefined);
  assert.equal(started.length, 2);
});

test("a memory store's writer is never recycled, nor a sleeping one", () => {
  const memory = setup(true);
  memory.writers.recycle(memory.writers.start());
  assert.equal(memory.started.length, 1);
  const sql = setup(false);
  const w = sql.writers.start();
  w.sleeping = true;
  sql.writers.recycle(w);
  assert.equal(sql.started.length, 1);
});

test('a successor that exits before taking over is logged; the writer goes on', () => {
  const { writers, started, errors, exit } = setup(false);
  const old = writers.start();
  writers.recycle(old);
  assert.equal(exit(started[1]!, null, 'SIGKILL'), 'done');
  assert.deepEqual(errors, ['the new writer process exited before taking over (SIGKILL)']);
  assert.equal(writers.writer, old);
  assert.equal(writers.successor, undefined);
  // a later recycle may start another
  writers.recycle(old);
  assert.equal(started.length, 3);
});

test('a fence stops every writer, and none is started again', () => {
  const { writers, started, views, exit } = setup(false);
  const old = writers.start();
  writers.recycle(old);
  const next = started[1]!;
  assert.equal(writers.fence('the store is fenced'), true);
  assert.deepEqual(views.at(-1), {
    socketPath: undefined,
    problem: 'the store is fenced',
    fenced: true,
  });
  assert.deepEqual([old.stops, next.stops], [1, 1]);
  assert.equal(writers.fence('again'), false);
  // exits after a fence are planned, whatever their code
  assert.equal(exit(old, 1), 'done');
  assert.equal(exit(next, null, 'SIGTERM'), 'done');
  assert.equal(writers.writer, undefined);
  writers.wake();
  assert.equal(started.length, 2);
  // a cluster that stops is not fenced by a late message
  const stopping = setup(false);
  stopping.state.stopping = true;
  assert.equal(stopping.writers.fence('x'), false);
});

test('any other exit is a crash: publishing is unavailable until the restart', () => {
  const { writers, views, exit } = setup(true);
  const first = writers.start();
  assert.equal(exit(first, 1), 'crashed');
  writers.crashed('code 1');
  assert.equal(writers.writer, undefined);
  assert.deepEqual(views.at(-1), {
    socketPath: undefined,
    problem: 'the writer process exited (code 1); it is being started again',
  });
  // a sleeping writer that did not exit cleanly crashed too, and wakes when restarted
  const second = writers.start();
  writers.idle(second);
  assert.equal(exit(second, null, 'SIGKILL'), 'crashed');
  writers.crashed('signal SIGKILL');
  assert.equal(writers.asleep, false);
});
