/**
 * The crash test's victim: opens a Directory on a PostgreSQL store and publishes large epochs
 * in a loop until it is killed, printing a line after each finished step:
 *
 *   ready <epoch> <root hex>        the directory is open (epoch as found)
 *   published <epoch> <root hex>    the publish returned: the epoch is committed
 *
 * Lines go to a pipe, which Node writes synchronously, so a printed epoch is committed and a
 * committed epoch may lack its line only if the kill fell between the two.
 *
 *   node --conditions=source --import tsx crash-child.ts <url> <schema> <application name>
 */

import { createHash } from 'node:crypto';
import { configurationByName, toHex, utf8 } from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import { CRASH_CONFIG, CRASH_VRF_SEED, crashUpdates } from './crash-plan.js';

const [url, schema, applicationName] = process.argv.slice(2);
const db = await PostgresDatabase.open(url!, { schema, applicationName, poolSize: 4 });
const dir = await Directory.open({
  config: configurationByName(CRASH_CONFIG),
  storage: new StorageManager(db),
  vrfKeys: new InMemoryVrfKeyStore(createHash('sha256').update(CRASH_VRF_SEED).digest()),
});
let { epoch, hash } = await dir.getEpochHash();
process.stdout.write(`ready ${epoch} ${toHex(hash)}\n`);
for (;;) {
  ({ epoch, hash } = await dir.publish(
    crashUpdates(epoch + 1n).map(([l, v]) => ({ label: utf8(l), value: utf8(v) })),
  ));
  process.stdout.write(`published ${epoch} ${toHex(hash)}\n`);
}
