// The packed store's index of value states on its own: one location per user, then a list
// once a user has several epochs, a state written again for its epoch handed back, growth,
// and compaction's moves applied only to the records still pointed at.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeLabel } from '@akd-ts/core';
import { ByteWriter, writeRecord, type ValueStateRecord } from '@akd-ts/storage';
import { Slabs } from '../src/slabs.js';
import { UserTable, usernameOf } from '../src/user-table.js';

const u = (s: string) => new TextEncoder().encode(s);

function stateBytes(name: string, epoch: bigint, value = 'v'): Uint8Array {
  const record: ValueStateRecord = {
    kind: 'valueState',
    username: u(name),
    epoch,
    version: epoch,
    label: new NodeLabel(new Uint8Array(32), 256),
    value: u(value),
  };
  const w = new ByteWriter();
  writeRecord(w, record);
  return w.done();
}

function table() {
  const slabs = new Slabs(1 << 20, (record, location) => users.move(record, location));
  const users: UserTable = new UserTable(slabs);
  const put = (name: string, epoch: bigint, value = 'v') => {
    const bytes = stateBytes(name, epoch, value);
    const location = slabs.append(bytes);
    return { location, old: users.put(location, u(name), epoch) };
  };
  return { slabs, users, put };
}

test("a user's value states are found by username and epoch, one or several", () => {
  const { slabs, users, put } = table();
  const a1 = put('alice', 1n);
  assert.equal(a1.old, -1);
  assert.deepEqual(users.locationsOf(u('alice')), [a1.location]);
  assert.deepEqual(usernameOf(slabs.bytesAt(a1.location)), u('alice'));
  assert.equal(users.epochAt(a1.location), 1n);
  const a2 = put('alice', 2n);
  const a3 = put('alice', 3n);
  assert.deepEqual(users.locationsOf(u('alice')), [a1.location, a2.location, a3.location]);
  assert.equal(users.find(u('alice'), 2n), a2.location);
  assert.equal(users.find(u('alice'), 4n), undefined);
  assert.deepEqual(users.locationsOf(u('bob')), []);
  assert.equal(users.find(u('bob'), 1n), undefined);
  assert.equal(users.size, 1);
});

test('a value state written again for its epoch hands back the location it replaces', () => {
  const { users, put } = table();
  const one = put('a', 1n, 'x');
  const again = put('a', 1n, 'y');
  assert.equal(again.old, one.location);
  assert.deepEqual(users.locationsOf(u('a')), [again.location]);
  // in a list too
  const two = put('a', 2n);
  const twoAgain = put('a', 2n, 'z');
  assert.equal(twoAgain.old, two.location);
  const oneAgain = put('a', 1n, 'w');
  assert.equal(oneAgain.old, again.location);
  assert.deepEqual(users.locationsOf(u('a')), [oneAgain.location, twoAgain.location]);
});

test('the table grows past its first 4,096 slots and finds every user after', () => {
  const { users, put } = table();
  const at: number[] = [];
  for (let i = 0; i < 5_000; i++) at.push(put(`user-${i}`, 1n).location);
  put('user-3', 2n);
  assert.equal(users.size, 5_000);
  for (let i = 0; i < 5_000; i += 41) assert.equal(users.find(u(`user-${i}`), 1n), at[i]);
  assert.equal([...users.locations()].length, 5_001);
});

test("compaction's move appends a record again only while the table points at it", () => {
  const { slabs, users, put } = table();
  const b1 = put('bob', 1n, 'old');
  const b1again = put('bob', 1n, 'new');
  const appended = slabs.appended;
  // the replaced record is dead: not moved
  users.move(slabs.bytesAt(b1.location), b1.location);
  assert.equal(slabs.appended, appended);
  assert.deepEqual(users.locationsOf(u('bob')), [b1again.location]);
  // a single live record moves
  users.move(slabs.bytesAt(b1again.location), b1again.location);
  const [moved] = users.locationsOf(u('bob'));
  assert.notEqual(moved, b1again.location);
  assert.deepEqual(slabs.bytesAt(moved!), stateBytes('bob', 1n, 'new'));
  // and one in a list
  const c1 = put('carol', 1n);
  put('carol', 2n);
  users.move(slabs.bytesAt(c1.location), c1.location);
  const c1moved = users.find(u('carol'), 1n)!;
  assert.notEqual(c1moved, c1.location);
  assert.deepEqual(slabs.bytesAt(c1moved), stateBytes('carol', 1n));
  // a location in no list: nothing moves
  const before = slabs.appended;
  users.move(slabs.bytesAt(c1.location), c1.location);
  assert.equal(slabs.appended, before);
});
