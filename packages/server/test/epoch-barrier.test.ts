// The cluster's epoch barrier on its own: a publish is answered once every proof server
// running then serves its epoch, once those left are gone, or when its timer fires; proof
// servers started later are not waited for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EpochBarrier, type Schedule } from '../src/cluster/epoch-barrier.js';
import type { ToChild } from '../src/cluster/messages.js';

class FakeChild {
  readonly got: ToChild[] = [];
  constructor(readonly name: string) {}
  send(message: ToChild): void {
    this.got.push(message);
  }
}

/** Timers that fire only when the test says, and know whether they were cancelled. */
function manualTimers() {
  const timers: { fire: () => void; ms: number; cancelled: boolean }[] = [];
  const schedule: Schedule = (fire, ms) => {
    const t = { fire, ms, cancelled: false };
    timers.push(t);
    return () => (t.cancelled = true);
  };
  return { timers, schedule };
}

test('a publish is answered once every proof server serves its epoch', () => {
  const { timers, schedule } = manualTimers();
  const barrier = new EpochBarrier<FakeChild>(2_000, schedule);
  const writer = new FakeChild('writer');
  const [a, b] = [new FakeChild('a'), new FakeChild('b')];
  barrier.announce(writer, 41, '7', [a, b]);
  assert.deepEqual(a.got, [{ type: 'epoch', id: 1, epoch: '7' }]);
  assert.deepEqual(b.got, [{ type: 'epoch', id: 1, epoch: '7' }]);
  assert.equal(timers[0]!.ms, 2_000);
  barrier.seen(a, 1);
  assert.deepEqual(writer.got, [], 'b has not said yet');
  // a late proof server's word, or one for another epoch, changes nothing
  barrier.seen(new FakeChild('late'), 1);
  barrier.seen(b, 99);
  assert.deepEqual(writer.got, []);
  barrier.seen(b, 1);
  assert.deepEqual(writer.got, [{ type: 'epoch-acked', id: 41 }]);
  assert.equal(timers[0]!.cancelled, true);
  assert.equal(barrier.pending, 0);
  // said twice: answered once
  barrier.seen(b, 1);
  assert.equal(writer.got.length, 1);
});

test('with no proof server the publish is answered at once; ids count up', () => {
  const { schedule } = manualTimers();
  const barrier = new EpochBarrier<FakeChild>(2_000, schedule);
  const writer = new FakeChild('writer');
  barrier.announce(writer, 1, '1', []);
  barrier.announce(writer, 2, '2', []);
  assert.deepEqual(writer.got, [
    { type: 'epoch-acked', id: 1 },
    { type: 'epoch-acked', id: 2 },
  ]);
  const a = new FakeChild('a');
  barrier.announce(writer, 3, '3', [a]);
  assert.deepEqual(a.got, [{ type: 'epoch', id: 3, epoch: '3' }]);
});

test('a proof server that exits is not waited for', () => {
  const { schedule } = manualTimers();
  const barrier = new EpochBarrier<FakeChild>(2_000, schedule);
  const writer = new FakeChild('writer');
  const [a, b] = [new FakeChild('a'), new FakeChild('b')];
  barrier.announce(writer, 5, '3', [a, b]);
  barrier.announce(writer, 6, '4', [a]);
  barrier.gone(a);
  assert.deepEqual(writer.got, [{ type: 'epoch-acked', id: 6 }]);
  barrier.gone(b);
  assert.deepEqual(writer.got, [
    { type: 'epoch-acked', id: 6 },
    { type: 'epoch-acked', id: 5 },
  ]);
});

test('past its time limit the publish is answered; stopping answers every one', () => {
  const { timers, schedule } = manualTimers();
  const barrier = new EpochBarrier<FakeChild>(500, schedule);
  const writer = new FakeChild('writer');
  const a = new FakeChild('a');
  barrier.announce(writer, 1, '1', [a]);
  barrier.announce(writer, 2, '2', [a]);
  barrier.announce(writer, 3, '3', [a]);
  timers[1]!.fire();
  assert.deepEqual(writer.got, [{ type: 'epoch-acked', id: 2 }]);
  barrier.settleAll();
  assert.deepEqual(
    writer.got.map((m) => (m as { id: number }).id),
    [2, 1, 3],
  );
  assert.equal(barrier.pending, 0);
  // a timer firing after its publish was answered does nothing
  timers[0]!.fire();
  assert.equal(writer.got.length, 3);
});

test('by default the time limit is a real timer of 2 s', async () => {
  // a limit of 1 ms on the real clock: the answer comes without any proof server's word
  const barrier = new EpochBarrier<FakeChild>(1);
  const writer = new FakeChild('writer');
  let answered!: () => void;
  const acked = new Promise<void>((resolve) => (answered = resolve));
  writer.send = (m) => {
    writer.got.push(m);
    answered();
  };
  barrier.announce(writer, 9, '1', [new FakeChild('a')]);
  await acked;
  assert.deepEqual(writer.got, [{ type: 'epoch-acked', id: 9 }]);
});
