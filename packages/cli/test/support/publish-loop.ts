/**
 * A writer publishing epochs one after another until stopped, for tests that need publishes
 * running meanwhile: `publish-loop.ts <store url> <vrf key hex>` opens the store's directory
 * (initialised by akd init with the whatsapp_v1 configuration) and prints
 * `done <epoch> <root hex>` after each publish. Epoch e updates labels user-0 .. user-199 to
 * the value `v<e>-<i>` and adds user-<e>00 .. user-<e>19.
 */

import { WhatsAppV1Configuration, fromHex, toHex, utf8 } from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore, type Update } from '@akd-ts/directory';
import { openDatabase } from '../../src/store.js';

/** The updates of epoch `e`, as this script publishes them. */
export function loopUpdates(e: bigint): Update[] {
  const updates: Update[] = [];
  for (let i = 0; i < 200; i++)
    updates.push({ label: utf8(`user-${i}`), value: utf8(`v${e}-${i}`) });
  for (let i = 0; i < 20; i++) {
    updates.push({ label: utf8(`user-${e}00-${i}`), value: utf8(`new-${e}-${i}`) });
  }
  return updates;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  const [url, keyHex] = process.argv.slice(2);
  const db = await openDatabase(url!);
  const dir = await Directory.open({
    config: new WhatsAppV1Configuration(),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(fromHex(keyHex!)),
  });
  let stopping = false;
  process.on('SIGTERM', () => (stopping = true));
  let { epoch } = await dir.getEpochHash();
  while (!stopping) {
    const { hash } = await dir.publish(loopUpdates(epoch + 1n));
    epoch += 1n;
    console.log(`done ${epoch} ${toHex(hash)}`);
  }
  await dir.close();
  await db.close();
}
