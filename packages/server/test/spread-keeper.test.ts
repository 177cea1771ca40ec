// The primary's side of connection spreading on its own: no limits while it is off, or
// before the socket is kept and every proof server listens; then limits, and a copy of the
// kept socket to each proof server told to accept again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ToChild } from '../src/cluster/messages.js';
import { SpreadKeeper } from '../src/cluster/spread-keeper.js';

class FakeChild {
  readonly got: { message: ToChild; handle: unknown }[] = [];
  send(message: ToChild, handle?: unknown): void {
    this.got.push({ message, handle });
  }
}

const socket = () => {
  const s = { closed: 0, close: () => void s.closed++ };
  return s;
};

test('off: proof servers get no orders, and the first socket is kept', () => {
  const keeper = new SpreadKeeper<FakeChild>(false, 2);
  const [a, b] = [new FakeChild(), new FakeChild()];
  const kept = socket();
  const extra = socket();
  keeper.listening(a);
  keeper.keepSocket(kept);
  keeper.keepSocket(extra);
  keeper.listening(b);
  keeper.report(a, 50);
  assert.equal(keeper.listeningCount, 2);
  assert.equal(keeper.socket, kept);
  assert.equal(extra.closed, 1, 'a later copy is closed');
  assert.equal(a.got.length + b.got.length, 0);
  keeper.close();
  assert.equal(kept.closed, 1);
});

test('on: limits start once the socket is kept and every proof server listens', () => {
  const keeper = new SpreadKeeper<FakeChild>(true, 2);
  const [a, b] = [new FakeChild(), new FakeChild()];
  const kept = socket();
  keeper.listening(a);
  keeper.keepSocket(kept);
  assert.equal(a.got.length, 0, 'one of two proof servers listens');
  keeper.listening(b);
  // both at 0 connections: a limit of the slack each
  assert.deepEqual(
    a.got.map((g) => g.message),
    [{ type: 'accept', start: false, limit: 4 }],
  );
  assert.deepEqual(
    b.got.map((g) => g.message),
    [{ type: 'accept', start: false, limit: 4 }],
  );
  // a stops past its limit (10 against a mean of 5: a limit of 9); once the mean rises it is
  // told to start again, with a copy of the kept socket
  keeper.confirm(a, false, 10);
  assert.deepEqual(a.got.at(-1), {
    message: { type: 'accept', start: false, limit: 9 },
    handle: undefined,
  });
  keeper.report(b, 15);
  const last = a.got.at(-1)!;
  assert.deepEqual(last.message, { type: 'accept', start: true, limit: 16 });
  assert.equal(last.handle, kept);
  // a proof server that exits: the other alone never stops
  keeper.gone(a, true);
  assert.equal(keeper.listeningCount, 1);
  assert.deepEqual(b.got.at(-1)!.message, { type: 'accept', start: false, limit: Infinity });
  // while the cluster stops, an exit changes no limit
  const before = b.got.length;
  keeper.listening(a);
  keeper.gone(a, false);
  assert.equal(b.got.length, before + 1, 'only the order when a listened again');
});

test('on, with the socket kept last: limits start then', () => {
  const keeper = new SpreadKeeper<FakeChild>(true, 2);
  const [a, b] = [new FakeChild(), new FakeChild()];
  keeper.listening(a);
  keeper.listening(b);
  assert.equal(a.got.length + b.got.length, 0);
  keeper.keepSocket(undefined);
  assert.equal(a.got.length + b.got.length, 0, 'no socket: nothing kept');
  keeper.keepSocket(socket());
  for (const c of [a, b]) {
    assert.deepEqual(
      c.got.map((g) => g.message),
      [{ type: 'accept', start: false, limit: 4 }],
    );
  }
});
