// A writer taking over from the previous writer of akd serve (cluster/writer-role.ts): it says
// it is ready first, then tries the lock until it is free, and gives up only on another error
// (a fenced store at once) or past its deadline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AkdError, isAkdError } from '@akd-ts/core';
import { WriterFencedError, isWriterFenced } from '@akd-ts/storage';
import type { Directory } from '@akd-ts/directory';
import { openWhenHandedOver } from '../src/cluster/writer-role.js';

const opened = {} as Directory;
const locked = () => new AkdError('STORAGE_LOCKED', 'another writer holds the writer lock');

test('ready first, then the lock as soon as the previous writer releases it', async () => {
  const events: string[] = [];
  let tries = 0;
  const directory = await openWhenHandedOver(
    async () => {
      events.push('open');
      if (++tries < 3) throw locked();
      return opened;
    },
    () => events.push('ready'),
  );
  assert.equal(directory, opened);
  assert.deepEqual(events, ['ready', 'open', 'open', 'open']);
});

test('another error is thrown at once; a lock that stays held, past the deadline', async () => {
  let tries = 0;
  await assert.rejects(
    openWhenHandedOver(
      async () => {
        tries++;
        throw new AkdError('STORAGE_CONNECTION', 'the store is unreachable');
      },
      () => {},
    ),
    (e) => isAkdError(e, 'STORAGE_CONNECTION'),
  );
  assert.equal(tries, 1);
  tries = 0;
  await assert.rejects(
    openWhenHandedOver(
      async () => {
        tries++;
        throw locked();
      },
      () => {},
      120,
    ),
    (e) => isAkdError(e, 'STORAGE_LOCKED'),
  );
  assert.ok(tries >= 2, `${tries} tries`);
});

test('a fenced store is thrown at once: it never comes free', async () => {
  let tries = 0;
  await assert.rejects(
    openWhenHandedOver(
      async () => {
        tries++;
        throw new WriterFencedError('schema "akd" is fenced', true);
      },
      () => {},
    ),
    (e) => isWriterFenced(e) && isAkdError(e, 'STORAGE_LOCKED'),
  );
  assert.equal(tries, 1);
});
